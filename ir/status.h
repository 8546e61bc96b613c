// qrt — status and result types shared by every layer.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace qrt {

/// A position in a source text; line and col are 1-based, 0 means "unknown".
struct SourceLoc {
  std::string file;  ///< File name as given by the caller (may be empty).
  int line = 0;      ///< 1-based line, 0 when unknown.
  int col = 0;       ///< 1-based column, 0 when unknown.
};

/// What kind of failure a Status reports; the C API maps it to a stable qrt_status.
enum class ErrorCode : int {
  kGeneric = 0,          ///< unclassified
  kParse,                ///< malformed input text or file
  kVerify,               ///< well-formed input that breaks an IR rule
  kInvalidArgument,      ///< a caller passed a wrong value (shape, dtype, size)
  kIo,                   ///< a file could not be read or written
  kUnsupported,          ///< valid but not supported (op, format, type)
  kRuntime,              ///< a failure while running (overflow, run-time shape)
  kOutOfMemory,          ///< the request exceeds the memory budget (or an allocation failed)
};

/// Success, or an error message with an optional source location.
/// Library code returns Status / Result<T> instead of throwing.
class [[nodiscard]] Status {
 public:
  /// The success value.
  Status() = default;
  /// Returns a success status.
  static Status ok() { return Status(); }
  /// Returns an error status with `message` and no location.
  static Status error(std::string message) { return Status(std::move(message), SourceLoc{}); }
  /// Returns an error status with `message` located at `loc`.
  static Status error_at(const SourceLoc& loc, std::string message) {
    return Status(std::move(message), loc);
  }

  /// Returns a copy with `code` set (success stays success).
  Status with_code(ErrorCode code) const {
    Status s = *this;
    if (!is_ok()) s.code_ = code;
    return s;
  }
  /// The error's classification (kGeneric unless set).
  ErrorCode code() const { return code_; }
  /// True on success.
  bool is_ok() const { return !failed_; }
  /// The bare message (without location prefix).
  const std::string& message() const { return message_; }
  /// The location of the error (line 0 when unknown).
  const SourceLoc& loc() const { return loc_; }
  /// Returns a copy with the location set if none is set yet.
  Status with_loc(const SourceLoc& loc) const {
    if (is_ok() || loc_.line != 0) return *this;
    Status s = *this;
    s.loc_ = loc;
    return s;
  }
  /// Returns a copy with `prefix` prepended to the message.
  Status with_prefix(const std::string& prefix) const {
    if (is_ok()) return *this;
    Status s = *this;
    s.message_ = prefix + message_;
    return s;
  }
  /// `file:line:col: error: message`, or `error: message` without a location.
  std::string to_string() const;

 private:
  Status(std::string message, SourceLoc loc)
      : failed_(true), message_(std::move(message)), loc_(std::move(loc)) {}
  bool failed_ = false;
  std::string message_;
  SourceLoc loc_;
  ErrorCode code_ = ErrorCode::kGeneric;
};

/// A value of type T or an error Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  /// Wraps a value.
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  /// Wraps an error; `status` must not be ok.
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  /// True when a value is held.
  bool is_ok() const { return std::holds_alternative<T>(v_); }
  /// The error, or an ok Status when a value is held.
  const Status& status() const {
    static const Status kOk;
    const Status* s = std::get_if<Status>(&v_);
    return s ? *s : kOk;
  }
  /// The value (only valid when is_ok()).
  T& value() & { return std::get<T>(v_); }
  /// The value (only valid when is_ok()).
  const T& value() const& { return std::get<T>(v_); }
  /// Moves the value out (only valid when is_ok()).
  T&& value() && { return std::get<T>(std::move(v_)); }
  /// Dereference shorthands.
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

/// Aborts with a message: for internal invariants only, never for user input.
[[noreturn]] void assert_fail(const char* expr, const char* file, int line);

}  // namespace qrt

/// Checks an internal invariant (never user input).
#define QRT_ASSERT(cond) \
  ((cond) ? (void)0 : ::qrt::assert_fail(#cond, __FILE__, __LINE__))

/// Returns the Status of `expr` from the enclosing function if it failed.
#define QRT_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::qrt::Status qrt_status_tmp_ = (expr);    \
    if (!qrt_status_tmp_.is_ok()) return qrt_status_tmp_; \
  } while (0)

#define QRT_CONCAT_INNER_(a, b) a##b
#define QRT_CONCAT_(a, b) QRT_CONCAT_INNER_(a, b)
/// `QRT_ASSIGN_OR_RETURN(auto x, f())`: unwraps a Result or returns its Status.
#define QRT_ASSIGN_OR_RETURN(decl, expr) \
  QRT_ASSIGN_OR_RETURN_IMPL_(QRT_CONCAT_(qrt_result_, __LINE__), decl, expr)
#define QRT_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                                \
  if (!tmp.is_ok()) return tmp.status();            \
  decl = std::move(tmp).value()
