/* graphrun-cc as a library: load a model once, run it many times, or hold
 * a TF1 session with variables, from C or through any foreign-function
 * interface (graphdef/_native/capi.py is the Python binding). Built as
 * build/libgraphrun.so from the C++ core graphrun-cc is also built on
 * (build/libgraphrun_core.a: no CLI code), so a model runs here exactly as
 * `graphrun-cc` runs it, optimized by the same graph passes.
 *
 * Errors: every function that can fail returns a status (GRAPHRUN_OK, or the
 * kind of failure) and, when `error` is not NULL, stores one line saying
 * what went wrong, to be released with graphrun_free_string. No C++
 * exception and no abort crosses this boundary for bad input: a missing
 * file, a malformed graph, an unknown input name, a wrong dtype or shape, an
 * op graphrun-cc has no kernel for.
 *
 * Dtypes are numpy's names: "float32", "float64", "int8", "int16", "int32",
 * "int64", "uint8", "uint16", "uint32", "uint64", "bool" (one byte, 0 or 1).
 * Shapes are int64 dims; -1 is a dim of any size, and a rank of -1 means any
 * rank. Tensors are dense, row-major (C order), in the host's byte order.
 *
 * Threads: any thread may call any function. Runs of one model take turns
 * (a lock of the model's own: its plans and its kernels' prepared state are
 * written by each run), and so do the calls on one session. Runs of
 * different models, or of one file loaded twice, share no state and go
 * ahead at once, each on its calling thread's OpenMP team: a server wanting
 * several batches under way loads the model once per worker, and can give
 * each fewer threads (graphrun_model_set_threads). Each load holds its own
 * graph, weights and prepared kernels (only external weight files are
 * mapped, once for every load of them). A model must not be freed while a
 * run of it is under way. Results are independent of the model and of each other.
 *
 * OpenMP: the threads (libgomp) spin long at every barrier unless told
 * otherwise, which on a machine with busy cores takes the core the other
 * threads need; graphrun-cc shortens the spin (GOMP_SPINCOUNT=1000) before
 * libgomp starts. A library cannot, so a process should set it (or
 * OMP_WAIT_POLICY=PASSIVE) in its environment before loading this library
 * (the Python binding sets GOMP_SPINCOUNT=1000, graphrun serve PASSIVE,
 * unless the user set either variable). In a server process passive waits
 * matter more than in graphrun-cc:
 * each calling thread that runs a model gets its own OpenMP team, so the
 * team of the previous caller would still be spinning when the next starts,
 * and the server's own threads (its network loop, the Python interpreter)
 * need the cores between runs.
 */
#ifndef GRAPHRUN_C_H_
#define GRAPHRUN_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct graphrun_model graphrun_model;
typedef struct graphrun_result graphrun_result;

enum {
  GRAPHRUN_OK = 0,
  GRAPHRUN_USAGE = 2,        /* bad call: unknown input or output, wrong dtype or shape, missing input */
  GRAPHRUN_MODEL = 3,        /* the model file is unreadable or invalid */
  GRAPHRUN_RUN = 4,          /* a kernel failed while running */
  GRAPHRUN_UNSUPPORTED = 5,  /* the model needs an op (or dtype) graphrun-cc cannot run; Python's runtime may */
  GRAPHRUN_INTERNAL = 6      /* anything else (a bug): the message says what */
};

/* The library's version, "graphrun-cc X.Y.Z". */
const char* graphrun_version(void);

/* Loads a frozen GraphDef (.pb, or text format when the path ends in
 * .pbtxt) or a SavedModel directory (`signature`: NULL or "" for
 * serving_default; it must be NULL or "" for a GraphDef). The model's
 * inputs are its Placeholders and PlaceholderWithDefaults, in file order;
 * its outputs are what no node reads, in file order (graphrun-cc's default
 * fetches). With `optimize` nonzero (and GRAPHRUN_CC_OPTIMIZE not "0"), the
 * graph passes run once here, keeping every input and output. A model any
 * of whose outputs needs an op graphrun-cc cannot run is refused
 * (GRAPHRUN_UNSUPPORTED). On success *model is set; free it with
 * graphrun_free_model. */
int graphrun_model_load(const char* path, const char* signature, int optimize, graphrun_model** model, char** error);

/* What the model takes and gives. Indexes run from 0 to the count - 1; the
 * strings and arrays returned live as long as the model. A name is how a
 * run refers to the tensor: an input's node name; an output's node name for
 * output 0 of its node, "node:k" for output k. Shapes of outputs are what
 * graphrun-cc's static shape rules infer (-1 where they cannot tell).
 * `required` is 0 for a PlaceholderWithDefault. */
int graphrun_model_num_inputs(const graphrun_model* model);
int graphrun_model_num_outputs(const graphrun_model* model);
const char* graphrun_model_input_name(const graphrun_model* model, int index);
const char* graphrun_model_input_dtype(const graphrun_model* model, int index);
int graphrun_model_input_rank(const graphrun_model* model, int index);
const int64_t* graphrun_model_input_shape(const graphrun_model* model, int index);
int graphrun_model_input_required(const graphrun_model* model, int index);
const char* graphrun_model_output_name(const graphrun_model* model, int index);
const char* graphrun_model_output_dtype(const graphrun_model* model, int index);
int graphrun_model_output_rank(const graphrun_model* model, int index);
const int64_t* graphrun_model_output_shape(const graphrun_model* model, int index);
/* "optimize: 812 nodes -> 312 (...)", or "optimize: off": what the graph passes did at load. */
const char* graphrun_model_optimize_summary(const graphrun_model* model);

/* Runs the model: feed k is input `names[k]` with dtype `dtypes[k]`, rank
 * `ranks[k]` and the next ranks[k] entries of `dims` (the feeds' dims one
 * after the other), its elements at `data[k]`: exactly the product of its
 * dims times the dtype's size in bytes, read in place (never copied, never
 * written) until the call returns. The dtype must be the input's own (no
 * conversion happens here) and the shape must fit the input's. Inputs not
 * fed take their default (PlaceholderWithDefault) or, if a fetch needs
 * them, fail the call. Fetches name outputs (see above; "node:0" is
 * accepted for "node"); a model loaded without optimizing also lets any
 * other tensor ("node" or "node:k") be fetched. On success *result holds one tensor per fetch, in
 * fetch order; free it with graphrun_free_result. */
int graphrun_model_run(graphrun_model* model, int num_feeds, const char* const* names, const char* const* dtypes,
                       const int* ranks, const int64_t* dims, const void* const* data, int num_fetches,
                       const char* const* fetches, graphrun_result** result, char** error);

/* How many OpenMP threads each run of the model spreads its kernels over
 * (oneDNN's and graphrun-cc's own alike): `threads` >= 1, or 0 for
 * OpenMP's default (OMP_NUM_THREADS, else one per core), which is what a
 * model has until this is called. It applies to the run's calling thread
 * for the run only. Set it before the first run, which prepares the
 * kernels for the count then in force: a different count afterwards is a
 * GRAPHRUN_USAGE (load the model again instead). Several models each on one
 * thread, run from as many threads, keep every core busy without waiting at
 * each other's barriers. */
int graphrun_model_set_threads(graphrun_model* model, int threads, char** error);

/* A run's tensors, owned by the result: valid until graphrun_free_result. */
int graphrun_result_count(const graphrun_result* result);
const char* graphrun_result_dtype(const graphrun_result* result, int index);
int graphrun_result_rank(const graphrun_result* result, int index);
const int64_t* graphrun_result_shape(const graphrun_result* result, int index);
const void* graphrun_result_data(const graphrun_result* result, int index);
size_t graphrun_result_nbytes(const graphrun_result* result, int index);

/* A session: TensorFlow 1's Session.run on a graph with variables, the
 * values of its variables kept from one run to the next (an initializer,
 * then training steps), as `graphrun-cc MODEL --run init --run train
 * --steps N` runs them. Names are TensorFlow's: a feed or a fetch is "node"
 * (output 0) or "node:k"; a target is a node name. Every call on a session
 * takes the session's own lock (see "Threads"); a session must not be
 * freed while another thread calls it. */
typedef struct graphrun_session graphrun_session;

/* A session on a serialized GraphDef (binary wire format, `size` bytes,
 * copied). Any well-formed graph is taken, an empty one included; ops
 * without a kernel only fail the runs that need them. VariableV2 nodes have
 * no value until a run assigns one and keep it across runs. With `optimize`
 * nonzero (and GRAPHRUN_CC_OPTIMIZE not "0") each plan runs the graph
 * passes keeping its feeds, fetches and targets (never folding a variable or
 * what reads one). Free it with graphrun_free_session. */
int graphrun_session_create(const void* graph_def, size_t size, int optimize, graphrun_session** session, char** error);

/* Grows the graph (a TF1 graph grows after its session starts): each node
 * and function of `graph_def` is added, replacing the one of its name if
 * the graph has it, so either a whole newer GraphDef or only the nodes added
 * since may be given. Plans are made anew; a variable keeps its value when
 * the new graph has a VariableV2 of the same name and dtype. On failure the
 * session is as it was. */
int graphrun_session_extend(graphrun_session* session, const void* graph_def, size_t size, char** error);

/* Whether these feeds (names), fetches and targets could run, without
 * running: GRAPHRUN_OK; GRAPHRUN_UNSUPPORTED with the message naming every
 * op without a kernel that they need (as graphrun-cc names them);
 * GRAPHRUN_USAGE for an unknown name or a feed this runtime cannot take
 * (it feeds a node with one output, of a dtype above). */
int graphrun_session_check(graphrun_session* session, int num_feeds, const char* const* feed_names, int num_fetches,
                           const char* const* fetches, int num_targets, const char* const* targets, char** error);

/* One execution, TF1 Session.run semantics: every target (run for its
 * effects: an initializer, a training step) and every fetch, each node at
 * most once. Feeds are given as in graphrun_model_run (read in place, never
 * written, during the call) but named "node" or "node:k"; the dtype must be
 * the node's and a Placeholder's shape must fit. Plans are kept per (feeds,
 * fetches, targets), up to a bound. On success *result holds one tensor per
 * fetch, in fetch order; neither it nor the variables refer to the feeds'
 * memory afterwards. */
int graphrun_session_run(graphrun_session* session, int num_feeds, const char* const* names, const char* const* dtypes,
                         const int* ranks, const int64_t* dims, const void* const* data, int num_fetches,
                         const char* const* fetches, int num_targets, const char* const* targets,
                         graphrun_result** result, char** error);

/* A variable's value: a result of one tensor, or of none while it has no
 * value; GRAPHRUN_USAGE when the graph has no VariableV2 of that name. */
int graphrun_session_read_variable(graphrun_session* session, const char* name, graphrun_result** result, char** error);

/* Sets a variable's value (`rank` dims at `dims`, the elements at `data`,
 * copied); its dtype must be the variable's. */
int graphrun_session_assign_variable(graphrun_session* session, const char* name, const char* dtype, int rank,
                                     const int64_t* dims, const void* data, char** error);

/* Each accepts NULL. */
void graphrun_free_session(graphrun_session* session);
void graphrun_free_model(graphrun_model* model);
void graphrun_free_result(graphrun_result* result);
void graphrun_free_string(char* text);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* GRAPHRUN_C_H_ */
