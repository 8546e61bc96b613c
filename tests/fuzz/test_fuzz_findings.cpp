// Inputs the libFuzzer targets found breaking a loader's contract (load_check.h), kept in
// tests/data/fuzz_findings/ and replayed here after their fix: the extension picks the
// format (.qrt files are recognised by their magic).
#include <doctest/doctest.h>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "load_check.h"

TEST_CASE("fuzz findings: every saved input loads with an error or round-trips through the printer") {
  std::vector<std::string> files;
  if (DIR* dir = opendir(FUZZ_FINDINGS_DIR)) {
    while (const dirent* e = readdir(dir))
      if (e->d_name[0] != '.' && std::string(e->d_name) != "README.md") files.push_back(e->d_name);
    closedir(dir);
  }
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());  // the directory ships with the findings fixed so far
  for (const std::string& name : files) {
    std::ifstream in(std::string(FUZZ_FINDINGS_DIR) + "/" + name, std::ios::binary);
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    const std::string ext = name.substr(name.rfind('.'));
    const std::string as = ext == ".qrt" ? "fuzz" : "fuzz" + ext;
    const std::string broken = qrt_fuzz::check_load(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), as.c_str());
    CHECK_MESSAGE(broken.empty(), name << ": " << broken);
  }
}
