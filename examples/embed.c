/* Embedding qrt from C: load a model, compile it for 2 threads, bind caller-owned input and
 * output buffers, run, print the result and where the time went.
 *
 *   cc examples/embed.c $(pkg-config --cflags --libs qrt) -o embed && ./embed examples/mlp.mlir
 */
#include <qrt.h>

#include <stdio.h>

static int check(qrt_status status, const char* what) {
  if (status == QRT_OK) return 1;
  fprintf(stderr, "%s: %s: %s\n", what, qrt_status_string(status), qrt_last_error_message());
  return 0;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "examples/mlp.mlir";
  qrt_model_t* model = NULL;
  qrt_plan_t* plan = NULL;
  qrt_context_t* context = NULL;
  qrt_plan_options options;
  const float x[2][4] = {{0.5f, -0.25f, 1.0f, 0.125f}, {-1.0f, 0.75f, 0.0f, 0.5f}};
  const int64_t dims[2] = {2, 4};
  float y[2][3];
  size_t ops = 0, i;
  int ok = 0;

  printf("qrt %s (header %s)\n", qrt_version(), QRT_VERSION_STRING);
  qrt_plan_options_init(&options);
  options.threads = 2;
  if (check(qrt_model_load_file(path, &model), "loading") && check(qrt_plan_create(model, &options, &plan), "compiling") &&
      check(qrt_context_create(plan, &context), "creating a context") &&
      check(qrt_context_bind_input(context, 0, QRT_DTYPE_F32, 2, dims, x, sizeof x), "binding the input") &&
      check(qrt_context_bind_output(context, 0, y, sizeof y), "binding the output") &&
      check(qrt_context_run(context), "running")) {
    printf("y = [[%g, %g, %g], [%g, %g, %g]]\n", y[0][0], y[0][1], y[0][2], y[1][0], y[1][1], y[1][2]);
    qrt_plan_num_ops(plan, &ops);
    for (i = 0; i < ops; ++i) {
      qrt_op_info info;
      uint64_t ns = 0;
      qrt_plan_op_info(plan, i, &info);
      qrt_context_op_time(context, i, &ns);
      printf("  op %zu %-14s %8.1f us  %s\n", i, info.op, (double)ns / 1000.0, info.kernel);
    }
    ok = 1;
  }
  qrt_context_destroy(context);
  qrt_plan_destroy(plan);
  qrt_model_destroy(model);
  return ok ? 0 : 1;
}
