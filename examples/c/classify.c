/* A classifier through graphrun's C API: load a model, feed its first input,
 * run it, and print the top class and its score for each row of its first
 * output.
 *
 *   classify MODEL.pb [INPUT]
 *
 * INPUT is a float32 .npy file (C order), or a file of raw float32 values in
 * the host's byte order; without it, every element is 0.5. The input must be
 * float32; a dim the model leaves open (-1) is taken from the .npy's shape,
 * else the first open dim is what the raw file's size makes it, the others 1.
 * The output must be float32, [classes] or [rows, classes].
 *
 * Build it with the SDK's pkg-config file or CMake package (CMakeLists.txt).
 */
#include <graphrun_c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 8

static int fail(const char* what, char* error) {
  fprintf(stderr, "classify: %s: %s\n", what, error ? error : "(no message)");
  graphrun_free_string(error);
  return 1;
}

/* Reads a whole file; NULL on failure. */
static char* read_file(const char* path, long* size) {
  FILE* f = fopen(path, "rb");
  char* data = NULL;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (*size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (data = malloc(*size ? *size : 1)) != NULL && fread(data, 1, *size, f) != (size_t)*size) {
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

/* A .npy's float32 elements, C order: sets *values (inside `file`), *count and
 * the shape; 0 when it is not such a file. */
static int parse_npy(char* file, long size, float** values, long* count, int* rank, int64_t* dims) {
  if (size < 10 || memcmp(file, "\x93NUMPY", 6) != 0) return 0;
  int major = (unsigned char)file[6];
  long header_len = major == 1 ? (unsigned char)file[8] | (unsigned char)file[9] << 8
                               : (long)((unsigned char)file[8] | (unsigned char)file[9] << 8 |
                                        (unsigned char)file[10] << 16 | (unsigned long)(unsigned char)file[11] << 24);
  long start = (major == 1 ? 10 : 12) + header_len;
  if (start > size) return 0;
  char header[4096];
  long n = header_len < (long)sizeof header - 1 ? header_len : (long)sizeof header - 1;
  memcpy(header, file + (major == 1 ? 10 : 12), n);
  header[n] = '\0';
  if (!strstr(header, "'<f4'") || !strstr(header, "'fortran_order': False")) return 0;
  char* p = strstr(header, "'shape': (");
  if (!p) return 0;
  p += strlen("'shape': (");
  *rank = 0;
  *count = 1;
  while (*p && *p != ')') {
    char* end;
    long long d = strtoll(p, &end, 10);
    if (end == p) {
      p++;
      continue;
    }
    if (*rank == MAX_RANK) return 0;
    dims[(*rank)++] = d;
    *count *= d;
    p = end;
  }
  if (start + *count * 4 > size) return 0;
  *values = (float*)(file + start);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s MODEL.pb [INPUT.npy | INPUT.raw]\n", argv[0]);
    return 2;
  }
  char* error = NULL;
  graphrun_model* model = NULL;
  if (graphrun_model_load(argv[1], NULL, 1, &model, &error) != GRAPHRUN_OK) return fail(argv[1], error);
  if (graphrun_model_num_inputs(model) < 1 || graphrun_model_num_outputs(model) < 1) {
    fprintf(stderr, "classify: the model needs an input and an output\n");
    return 1;
  }
  const char* input = graphrun_model_input_name(model, 0);
  const char* output = graphrun_model_output_name(model, 0);
  if (strcmp(graphrun_model_input_dtype(model, 0), "float32") != 0) {
    fprintf(stderr, "classify: input %s is %s, not float32\n", input, graphrun_model_input_dtype(model, 0));
    return 1;
  }

  /* The input's shape: the model's, its open dims filled in. */
  int rank = graphrun_model_input_rank(model, 0);
  if (rank < 0 || rank > MAX_RANK) {
    fprintf(stderr, "classify: input %s has no fixed rank\n", input);
    return 1;
  }
  int64_t dims[MAX_RANK];
  memcpy(dims, graphrun_model_input_shape(model, 0), sizeof(int64_t) * rank);
  long known = 1;
  for (int i = 0; i < rank; i++) known *= dims[i] < 0 ? 1 : dims[i];

  float* values = NULL;
  char* file = NULL;
  long count = known;
  if (argc == 3) {
    long size = 0;
    if (!(file = read_file(argv[2], &size))) {
      perror(argv[2]);
      return 1;
    }
    int npy_rank;
    int64_t npy_dims[MAX_RANK];
    if (parse_npy(file, size, &values, &count, &npy_rank, npy_dims)) {
      if (npy_rank != rank) {
        fprintf(stderr, "classify: %s has rank %d, input %s rank %d\n", argv[2], npy_rank, input, rank);
        return 1;
      }
      memcpy(dims, npy_dims, sizeof(int64_t) * rank);
    } else {
      values = (float*)file;
      count = size / (long)sizeof(float);
      int open = 1;
      long need = 1;
      for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) dims[i] = open && known ? count / known : 1, open = 0;
        need *= dims[i];
      }
      /* The library reads as many elements as the shape holds: never past the file's. */
      if (need > count) {
        fprintf(stderr, "classify: %s holds %ld float32 values, input %s takes %ld\n", argv[2], count, input, need);
        return 1;
      }
    }
  } else {
    for (int i = 0; i < rank; i++)
      if (dims[i] < 0) dims[i] = 1;
    values = malloc(sizeof(float) * (count ? count : 1));
    for (long i = 0; i < count; i++) values[i] = 0.5f;
  }

  const char* dtype = "float32";
  const void* data = values;
  graphrun_result* result = NULL;
  if (graphrun_model_run(model, 1, &input, &dtype, &rank, dims, &data, 1, &output, &result, &error) != GRAPHRUN_OK)
    return fail("run", error);

  int out_rank = graphrun_result_rank(result, 0);
  const int64_t* out_dims = graphrun_result_shape(result, 0);
  if (strcmp(graphrun_result_dtype(result, 0), "float32") != 0 || out_rank < 1 || out_rank > 2) {
    fprintf(stderr, "classify: output %s is %s of rank %d, not float32 [rows, classes]\n", output,
            graphrun_result_dtype(result, 0), out_rank);
    return 1;
  }
  int64_t rows = out_rank == 2 ? out_dims[0] : 1, classes = out_dims[out_rank - 1];
  const float* scores = graphrun_result_data(result, 0);
  printf("%s -> %s\n", input, output);
  for (int64_t r = 0; r < rows; r++) {
    int64_t best = 0;
    for (int64_t c = 1; c < classes; c++)
      if (scores[r * classes + c] > scores[r * classes + best]) best = c;
    printf("row %lld: class %lld score %.6f\n", (long long)r, (long long)best, scores[r * classes + best]);
  }

  graphrun_free_result(result);
  graphrun_free_model(model);
  if (file) free(file);
  else free(values);
  return 0;
}
