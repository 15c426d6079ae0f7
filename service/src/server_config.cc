// The server's settings: each flag with its environment variable, parsed
// into a ServerConfig with errors that name the flag and its range.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ridgeline/service/server.h"
#include "ridgeline/serving/candidates.h"

namespace ridgeline::service {
namespace {

// One configurable setting: flag, environment variable, help.
struct FlagSpec {
  const char* flag;
  const char* env;
  const char* help;
  // Applies a textual value; returns an error naming `source`.
  std::function<absl::Status(ServerConfig*, absl::string_view value,
                             absl::string_view source)>
      apply;
};

absl::Status BadValue(absl::string_view source, absl::string_view range,
                      absl::string_view value) {
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": must be ", range, "; got \"", value.substr(0, 128), "\""));
}

auto StringSetting(std::string ServerConfig::*field, bool is_address) {
  return [field, is_address](ServerConfig* c, absl::string_view v,
                             absl::string_view source) -> absl::Status {
    if (is_address) {
      const size_t colon = v.rfind(':');
      int port = -1;
      if (colon == absl::string_view::npos ||
          !absl::SimpleAtoi(v.substr(colon + 1), &port) || port < 0 ||
          port > 65535) {
        if (!((field == &ServerConfig::metrics_listen ||
               field == &ServerConfig::http_listen ||
               field == &ServerConfig::llmd_predictor_listen) &&
              (v.empty() || v == "off"))) {
          return BadValue(source, "HOST:PORT with PORT in [0, 65535]", v);
        }
      }
    }
    c->*field = std::string(v);
    return absl::OkStatus();
  };
}

auto IntSetting(int64_t ServerConfig::*field, int64_t lo, int64_t hi) {
  return [=](ServerConfig* c, absl::string_view v,
             absl::string_view source) -> absl::Status {
    int64_t x = 0;
    if (!absl::SimpleAtoi(v, &x) || x < lo || x > hi) {
      return BadValue(source,
                      absl::StrCat("an integer in [", lo, ", ", hi, "]"), v);
    }
    c->*field = x;
    return absl::OkStatus();
  };
}

auto BoolSetting(bool ServerConfig::*field) {
  return [=](ServerConfig* c, absl::string_view v,
             absl::string_view source) -> absl::Status {
    if (v == "true" || v == "1") {
      c->*field = true;
    } else if (v == "false" || v == "0") {
      c->*field = false;
    } else {
      return BadValue(source, "true or false", v);
    }
    return absl::OkStatus();
  };
}

auto TlsPath(std::string TlsSettings::*field) {
  return [=](ServerConfig* c, absl::string_view v,
             absl::string_view) -> absl::Status {
    c->tls.*field = std::string(v);
    return absl::OkStatus();
  };
}

auto DoubleSetting(double ServerConfig::*field, double lo, double hi) {
  return [=](ServerConfig* c, absl::string_view v,
             absl::string_view source) -> absl::Status {
    double x = 0;
    if (!absl::SimpleAtod(v, &x) || !(x >= lo && x <= hi)) {
      return BadValue(source, absl::StrCat("a number in [", lo, ", ", hi, "]"),
                      v);
    }
    c->*field = x;
    return absl::OkStatus();
  };
}

// Ports and the HTTP frontend.
std::vector<FlagSpec> PortFlags() {
  return {
      {"listen", "RIDGELINE_LISTEN",
       "gRPC address HOST:PORT (default 0.0.0.0:50051). Port 0 picks a free "
       "port; the bound address is printed as \"listening on HOST:PORT\".",
       StringSetting(&ServerConfig::listen, true)},
      {"metrics-listen", "RIDGELINE_METRICS_LISTEN",
       "Prometheus /metrics address HOST:PORT (default 0.0.0.0:9464); port 0 "
       "picks a free port, printed as \"metrics listening on HOST:PORT\"; "
       "\"off\" disables metrics.",
       StringSetting(&ServerConfig::metrics_listen, true)},
      {"http-listen", "RIDGELINE_HTTP_LISTEN",
       "HTTP/JSON API and web UI address HOST:PORT (default off); port 0 "
       "picks a free port, printed as \"http listening on HOST:PORT\". "
       "Serves POST /v1/<Method>, GET /healthz, /readyz and the UI at /.",
       StringSetting(&ServerConfig::http_listen, true)},
      {"http-timeout-seconds", "RIDGELINE_HTTP_TIMEOUT_SECONDS",
       "Deadline of a unary HTTP/JSON request without a grpc-timeout header, "
       "and the longest one may ask for; past it the call ends 504 and its "
       "engine work stops (streams end when their client goes). 0..86400, "
       "default 300 (0 = none).",
       DoubleSetting(&ServerConfig::http_timeout_seconds, 0, 86400)},
      {"http-read-timeout-seconds", "RIDGELINE_HTTP_READ_TIMEOUT_SECONDS",
       "Each HTTP request, head and body, must arrive within this many "
       "seconds of the connection's previous response (or of its accept); "
       "an idle, slow or stalled connection is closed at it. 0.1..3600, "
       "default 20.",
       DoubleSetting(&ServerConfig::http_read_timeout_seconds, 0.1, 3600)},
      {"http-max-connections", "RIDGELINE_HTTP_MAX_CONNECTIONS",
       "HTTP connections open at once; more are closed at accept. "
       "1..100000, default 1024.",
       IntSetting(&ServerConfig::http_max_connections, 1, 100'000)},
      {"http-allowed-origins", "RIDGELINE_HTTP_ALLOWED_ORIGINS",
       "Comma-separated origins (scheme://host[:port]) whose web pages may "
       "call the HTTP API, besides the server's own; \"*\" allows any. A "
       "request with another Origin header is refused 403 (default: none).",
       StringSetting(&ServerConfig::http_allowed_origins, false)},
      {"web-dir", "RIDGELINE_WEB_DIR",
       "Folder of the web UI's static files (default: the installed web "
       "folder, or the source tree's web/ for an uninstalled binary).",
       StringSetting(&ServerConfig::web_dir, false)},
  };
}

// Plugin and profile folders.
// llm-d's latency-predictor HTTP API on a port of its own.
std::vector<FlagSpec> LlmdPredictorFlags() {
  return {
      {"llmd-predictor-listen", "RIDGELINE_LLMD_PREDICTOR_LISTEN",
       "Serve llm-d's latency-predictor HTTP API (POST /predict, "
       "/predict/bulk, /predict/bulk/strict, /add_training_data_bulk; GET "
       "/healthz, /readyz, /status) on HOST:PORT for one pod kind "
       "(--llmd-model, --llmd-hardware); port 0 picks a free port, printed "
       "as \"llmd predictor listening on HOST:PORT\". No bearer token (as "
       "llm-d's sidecar): bind it to the pod's loopback. Default off.",
       StringSetting(&ServerConfig::llmd_predictor_listen, true)},
      {"llmd-model", "RIDGELINE_LLMD_MODEL",
       "Catalog model the predicted pods serve (required with "
       "--llmd-predictor-listen).",
       StringSetting(&ServerConfig::llmd_model, false)},
      {"llmd-hardware", "RIDGELINE_LLMD_HARDWARE",
       "Catalog platform of the predicted pods (required with "
       "--llmd-predictor-listen).",
       StringSetting(&ServerConfig::llmd_hardware, false)},
      {"llmd-tensor-parallel", "RIDGELINE_LLMD_TENSOR_PARALLEL",
       "Tensor-parallel degree of a pod, 1..256, default 1.",
       IntSetting(&ServerConfig::llmd_tensor_parallel, 1, 256)},
      {"llmd-framework", "RIDGELINE_LLMD_FRAMEWORK",
       "Serving runtime of the pods (\"vllm\", \"sglang\", ...): its "
       "serving calibration profile applies; default none (the pure "
       "roofline, an upper bound on speed).",
       StringSetting(&ServerConfig::llmd_framework, false)},
  };
}

std::vector<FlagSpec> FolderFlags() {
  return {
      {"plugin-dir", "RIDGELINE_PLUGIN_DIR",
       "Folder of hardware plugin .so files, instead of the installed ones "
       "(default: the installed plugin folder, or the build tree's for an "
       "uninstalled binary). A folder that does not exist stops the start.",
       StringSetting(&ServerConfig::plugin_dir, false)},
      {"extra-plugin-dir", "RIDGELINE_EXTRA_PLUGIN_DIR",
       "More plugin folders, loaded after --plugin-dir's (an id already "
       "loaded refuses the later plugin): repeatable, or a comma list; the "
       "flags' folders come after the variable's. A folder that does not "
       "exist stops the start.",
       [](ServerConfig* c, absl::string_view v,
          absl::string_view source) -> absl::Status {
         const std::vector<absl::string_view> dirs =
             absl::StrSplit(v, ',', absl::SkipWhitespace());
         if (dirs.empty()) {
           return BadValue(source, "a folder or a comma list of folders", v);
         }
         for (absl::string_view dir : dirs) {
           c->extra_plugin_dirs.emplace_back(absl::StripAsciiWhitespace(dir));
         }
         return absl::OkStatus();
       }},
      {"profile-dir", "RIDGELINE_PROFILE_DIR",
       "Folder of calibration profiles (default: the installed profiles).",
       StringSetting(&ServerConfig::profile_dir, false)},
  };
}

// What one request may cost (docs/operations.md, "Limits").
std::vector<FlagSpec> RequestLimitFlags() {
  return {
      {"max-sweep-points", "RIDGELINE_MAX_SWEEP_POINTS",
       "Most points one Sweep request (or shard) may ask for; more is "
       "RESOURCE_EXHAUSTED. 1..100000000, default 100000.",
       IntSetting(&ServerConfig::max_sweep_points, 1, 100'000'000)},
      {"max-message-bytes", "RIDGELINE_MAX_MESSAGE_BYTES",
       "Largest request message accepted, bytes. 1024..1073741824, default "
       "4194304.",
       IntSetting(&ServerConfig::max_message_bytes, 1024, 1 << 30)},
      {"shutdown-grace-seconds", "RIDGELINE_SHUTDOWN_GRACE_SECONDS",
       "On SIGTERM/SIGINT: health goes NOT_SERVING, in-flight RPCs get this "
       "long to finish, then are cancelled. 0..3600, default 10.",
       DoubleSetting(&ServerConfig::shutdown_grace_seconds, 0, 3600)},
      {"plugin-load-delay-ms", "RIDGELINE_PLUGIN_LOAD_DELAY_MS",
       "Wait this long before loading plugins (testing readiness probes). "
       "0..600000, default 0.",
       IntSetting(&ServerConfig::plugin_load_delay_ms, 0, 600'000)},
      {"max-inline-config-bytes", "RIDGELINE_MAX_INLINE_CONFIG_BYTES",
       "Largest inline config.json (ModelSpec.hf_config_json) accepted, bytes; "
       "more is RESOURCE_EXHAUSTED. Parsing costs ~20x this in memory. "
       "1024..1073741824, default 1048576.",
       IntSetting(&ServerConfig::max_inline_config_bytes, 1024, 1 << 30)},
      {"max-request-cost", "RIDGELINE_MAX_REQUEST_COST",
       "Largest estimated cost of one scenario in token-layers: batch x "
       "(prompt + generated tokens) x layers, plus 1e4 x layers for every "
       "step timed one by one (prefill chunks after the first, decode steps "
       "under a plugin hook) in each analysis (suggestions run up to 8 "
       "more); more is RESOURCE_EXHAUSTED. 1..1e18, default 1e12.",
       DoubleSetting(&ServerConfig::max_request_cost, 1, 1e18)},
      {"max-explore-points", "RIDGELINE_MAX_EXPLORE_POINTS",
       "Most grid points one Explore request (or shard) may evaluate; more "
       "is RESOURCE_EXHAUSTED (shard it, or search it with NSGA-II). "
       "1..1000000000000, default 100000000.",
       IntSetting(&ServerConfig::max_explore_points, 1, 1'000'000'000'000)},
      {"max-explore-all-points", "RIDGELINE_MAX_EXPLORE_ALL_POINTS",
       "Most points an Explore with include_all may stream. 1..1000000000, "
       "default 1000000.",
       IntSetting(&ServerConfig::max_explore_all_points, 1, 1'000'000'000)},
      {"max-explore-front-points", "RIDGELINE_MAX_EXPLORE_FRONT_POINTS",
       "Most distinct objective vectors an Explore's Pareto front may hold "
       "(tied points count once: docs/explore.md); more is "
       "RESOURCE_EXHAUSTED. Each costs ~100 B per worker, twice. "
       "1..100000000, default 100000.",
       IntSetting(&ServerConfig::max_explore_front_points, 1, 100'000'000)},
      {"max-sequence-steps", "RIDGELINE_MAX_SEQUENCE_STEPS",
       "Largest estimated cost of one Simulate or Plan in sequence-steps "
       "(one sequence in one simulated step): simulations x requests x "
       "(mean generated tokens + prompt chunks - 1); more is "
       "RESOURCE_EXHAUSTED before any simulation. 1..1e18, default 2e9.",
       DoubleSetting(&ServerConfig::max_sequence_steps, 1, 1e18)},
      {"max-request-memory-bytes", "RIDGELINE_MAX_REQUEST_MEMORY_BYTES",
       "Largest estimated working set of one Simulate, Plan or Explore "
       "(include_all, NSGA-II), bytes; more is RESOURCE_EXHAUSTED before the "
       "work. 1048576..1099511627776, default 268435456.",
       IntSetting(&ServerConfig::max_request_memory_bytes, 1 << 20,
                  int64_t{1} << 40)},
      {"max-plan-candidates", "RIDGELINE_MAX_PLAN_CANDIDATES",
       "Most deployments one Plan may size (hardware x pipeline_parallel x "
       "(tensor_parallel or expert_parallel) x formats, plus prefill and "
       "decode pools); more is RESOURCE_EXHAUSTED. 1..512, default 512.",
       // The planner's own cap (serving/candidates.h) is the ceiling.
       IntSetting(&ServerConfig::max_plan_candidates, 1,
                  serving::kMaxPlanCandidates)},
      {"max-concurrent-expensive-calls",
       "RIDGELINE_MAX_CONCURRENT_EXPENSIVE_CALLS",
       "Plan, Simulate, Explore and ExploreSensitivity calls running at once, "
       "all clients; one more is RESOURCE_EXHAUSTED at once (not queued; "
       "retry with backoff). 0..100000, default 0 = one per CPU core.",
       IntSetting(&ServerConfig::max_concurrent_expensive_calls, 0, 100'000)},
      {"grpc-default-timeout-seconds", "RIDGELINE_GRPC_DEFAULT_TIMEOUT_SECONDS",
       "Deadline of a unary gRPC call whose client sets none (as "
       "--http-timeout-seconds for HTTP); past it the call ends "
       "DEADLINE_EXCEEDED and its engine work stops. 0..86400, default 300 "
       "(0 = none).",
       DoubleSetting(&ServerConfig::grpc_default_timeout_seconds, 0, 86400)},
  };
}

// Threads, streams, connections and plugin loading.
std::vector<FlagSpec> ConcurrencyFlags() {
  return {
      {"work-threads", "RIDGELINE_WORK_THREADS",
       "Threads running Analyze/AnalyzeKernel (health checks and cheap calls "
       "never wait for them). 0..1024, default 0 = one per CPU core.",
       IntSetting(&ServerConfig::work_threads, 0, 1024)},
      {"max-queued-calls", "RIDGELINE_MAX_QUEUED_CALLS",
       "Analyze/AnalyzeKernel calls that may wait for a work thread; more "
       "are RESOURCE_EXHAUSTED. 1..1000000, default 1024.",
       IntSetting(&ServerConfig::max_queued_calls, 1, 1'000'000)},
      {"max-sweep-streams", "RIDGELINE_MAX_SWEEP_STREAMS",
       "Sweep streams open at once, all clients; more are RESOURCE_EXHAUSTED. "
       "1..100000, default 64.",
       IntSetting(&ServerConfig::max_sweep_streams, 1, 100'000)},
      {"max-sweep-streams-per-client", "RIDGELINE_MAX_SWEEP_STREAMS_PER_CLIENT",
       "Sweep streams open at once from one client IP address. 1..100000, "
       "default 8.",
       IntSetting(&ServerConfig::max_sweep_streams_per_client, 1, 100'000)},
      {"sweep-write-timeout-seconds", "RIDGELINE_SWEEP_WRITE_TIMEOUT_SECONDS",
       "A Sweep whose client has not read a point for this long is "
       "cancelled, freeing its thread. 0.05..86400, default 30.",
       DoubleSetting(&ServerConfig::sweep_write_timeout_seconds, 0.05, 86400)},
      {"max-explore-streams", "RIDGELINE_MAX_EXPLORE_STREAMS",
       "Explore streams open at once, all clients; more are "
       "RESOURCE_EXHAUSTED. 1..192, default 32. With --max-sweep-streams "
       "and --max-step-streams at most 192 in all (each stream holds one of "
       "the server's 256 threads).",
       IntSetting(&ServerConfig::max_explore_streams, 1, kStreamThreadBudget)},
      {"max-explore-streams-per-client",
       "RIDGELINE_MAX_EXPLORE_STREAMS_PER_CLIENT",
       "Explore streams open at once from one client IP address. 1..192, "
       "default 8.",
       IntSetting(&ServerConfig::max_explore_streams_per_client, 1,
                  kStreamThreadBudget)},
      {"max-step-streams", "RIDGELINE_MAX_STEP_STREAMS",
       "StepTimeStream streams open at once, all clients; more are "
       "RESOURCE_EXHAUSTED. 1..192, default 64.",
       IntSetting(&ServerConfig::max_step_streams, 1, kStreamThreadBudget)},
      {"max-step-streams-per-client", "RIDGELINE_MAX_STEP_STREAMS_PER_CLIENT",
       "StepTimeStream streams open at once from one client IP address. "
       "1..192, default 8.",
       IntSetting(&ServerConfig::max_step_streams_per_client, 1,
                  kStreamThreadBudget)},
      {"stream-idle-timeout-seconds", "RIDGELINE_STREAM_IDLE_TIMEOUT_SECONDS",
       "An Explore or StepTimeStream stream whose client neither reads nor "
       "sends for this long while the server waits on it is cancelled, "
       "freeing its thread (Sweep: --sweep-write-timeout-seconds). "
       "0.05..86400, default 60.",
       DoubleSetting(&ServerConfig::stream_idle_timeout_seconds, 0.05, 86400)},
      {"max-connection-idle-seconds", "RIDGELINE_MAX_CONNECTION_IDLE_SECONDS",
       "Close a client connection with no call for this long (GOAWAY; "
       "clients reconnect on their next call). 0 = never. 0..86400, default "
       "300.",
       DoubleSetting(&ServerConfig::max_connection_idle_seconds, 0, 86400)},
      {"max-connection-age-seconds", "RIDGELINE_MAX_CONNECTION_AGE_SECONDS",
       "Close every connection after this long (GOAWAY, then the grace "
       "below), so clients reconnect and rebalance onto new replicas. 0 = "
       "unlimited. 0..604800, default 0.",
       DoubleSetting(&ServerConfig::max_connection_age_seconds, 0, 604800)},
      {"max-connection-age-grace-seconds",
       "RIDGELINE_MAX_CONNECTION_AGE_GRACE_SECONDS",
       "Calls on a connection past its age get this long to finish. "
       "0..86400, default 30.",
       DoubleSetting(&ServerConfig::max_connection_age_grace_seconds, 0,
                     86400)},
      {"plugin-check-timeout-seconds", "RIDGELINE_PLUGIN_CHECK_TIMEOUT_SECONDS",
       "Each plugin runs in a plugin-host child process of its own; one "
       "whose load crashes there, or takes longer than this, is refused. "
       "0 = load plugins into the server itself (no isolation). 0..3600, "
       "default 10.",
       DoubleSetting(&ServerConfig::plugin_check_timeout_seconds, 0, 3600)},
  };
}

// TLS, the bearer token and reflection.
std::vector<FlagSpec> SecurityFlags() {
  return {
      {"tls-cert", "RIDGELINE_TLS_CERT",
       "PEM certificate chain: serve gRPC, and HTTP with --http-listen, "
       "over TLS only (default: plaintext). Re-read every "
       "--tls-reload-seconds and on SIGHUP.",
       TlsPath(&TlsSettings::cert_path)},
      {"tls-key", "RIDGELINE_TLS_KEY", "PEM private key of --tls-cert.",
       TlsPath(&TlsSettings::key_path)},
      {"tls-client-ca", "RIDGELINE_TLS_CLIENT_CA",
       "PEM CA bundle: require mutual TLS; clients without a certificate "
       "signed by it are refused at the handshake.",
       TlsPath(&TlsSettings::client_ca_path)},
      {"tls-reload-seconds", "RIDGELINE_TLS_RELOAD_SECONDS",
       "How often the TLS files are re-read (rotation without restart). "
       "1..86400, default 60.",
       [](ServerConfig* c, absl::string_view v,
          absl::string_view source) -> absl::Status {
         int64_t x = 0;
         if (!absl::SimpleAtoi(v, &x) || x < 1 || x > 86400) {
           return BadValue(source, "an integer in [1, 86400]", v);
         }
         c->tls.reload_seconds = x;
         return absl::OkStatus();
       }},
      {"auth-token-file", "RIDGELINE_AUTH_TOKEN_FILE",
       "File whose first line is a bearer token: every RPC that computes "
       "(gRPC and HTTP/JSON) is then protected and needs \"authorization: "
       "Bearer <token>\" (HTTP: the Authorization header; else "
       "UNAUTHENTICATED / 401); health, the catalog (ListHardware, "
       "GetHardware, ListModels, GetModel) and reflection are not. SIGHUP "
       "re-reads the file. Default: no "
       "authentication.",
       StringSetting(&ServerConfig::auth_token_file, false)},
      {"reflection", "RIDGELINE_REFLECTION",
       "Serve gRPC server reflection: true or false, default true.",
       BoolSetting(&ServerConfig::reflection)},
  };
}

// Every flag, in the order --help lists them.
const std::vector<FlagSpec>& Flags() {
  static const std::vector<FlagSpec>* flags = [] {
    auto* all = new std::vector<FlagSpec>();
    for (auto group : {PortFlags, LlmdPredictorFlags, FolderFlags,
                       RequestLimitFlags, ConcurrencyFlags, SecurityFlags}) {
      for (FlagSpec& f : group()) all->push_back(std::move(f));
    }
    return all;
  }();
  return *flags;
}

}  // namespace

absl::StatusOr<ServerConfig> ParseServerConfig(
    int argc, const char* const* argv,
    const std::function<const char*(const char*)>& getenv, bool* help) {
  ServerConfig c;
  *help = false;
  for (const FlagSpec& f : Flags()) {
    if (const char* v = getenv(f.env); v != nullptr) {
      absl::Status s = f.apply(&c, v, f.env);
      if (!s.ok()) return s;
    }
  }
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      *help = true;
      return c;
    }
    if (arg.substr(0, 2) != "--") {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument \"", arg.substr(0, 128), "\"; see --help"));
    }
    arg.remove_prefix(2);
    absl::string_view name = arg, value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& f : Flags()) {
      if (name == f.flag) spec = &f;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name.substr(0, 128), "; see --help"));
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, ": missing value"));
      }
      value = argv[++i];
    }
    absl::Status s = spec->apply(&c, value, absl::StrCat("--", name));
    if (!s.ok()) return s;
  }
  // Every stream holds a synchronous thread: together they must leave some
  // of the kMaxServerThreads to unary calls.
  const int64_t streams =
      c.max_sweep_streams + c.max_explore_streams + c.max_step_streams;
  if (streams > kStreamThreadBudget) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-sweep-streams + --max-explore-streams + --max-step-streams: "
        "must be at most ",
        kStreamThreadBudget, " (of the server's ", kMaxServerThreads,
        " threads); got ", c.max_sweep_streams, " + ", c.max_explore_streams,
        " + ", c.max_step_streams, " = ", streams));
  }
  if (!c.llmd_predictor_listen.empty() && c.llmd_predictor_listen != "off" &&
      (c.llmd_model.empty() || c.llmd_hardware.empty())) {
    return absl::InvalidArgumentError(
        "--llmd-predictor-listen: needs --llmd-model and --llmd-hardware "
        "(the pods' model and platform)");
  }
  return c;
}

std::string ServerUsage() {
  std::string out =
      "Usage: ridgeline-server [--flag=value ...]\n\n"
      "Serves the ridgeline.v1.RidgelineService gRPC API (with grpc.health.v1 "
      "and server\nreflection) and Prometheus metrics. Each flag can also be "
      "set by the environment\nvariable shown; a flag wins over its "
      "variable.\n\n";
  for (const FlagSpec& f : Flags()) {
    absl::StrAppend(&out, "  --", f.flag, " (", f.env, ")\n      ", f.help,
                    "\n");
  }
  absl::StrAppend(&out,
                  "  --help, -h\n      Print this text and exit.\n\n"
                  "SIGTERM/SIGINT: health NOT_SERVING, drain for the grace "
                  "period, exit 0. SIGHUP: re-read the token and TLS "
                  "files. SIGUSR1/SIGUSR2: ignored.\n");
  return out;
}

Limits LimitsFromConfig(const ServerConfig& cfg) {
  Limits limits;
  limits.max_sweep_points = cfg.max_sweep_points;
  limits.max_inline_config_bytes = cfg.max_inline_config_bytes;
  limits.max_request_cost = cfg.max_request_cost;
  limits.max_explore_points = cfg.max_explore_points;
  limits.max_explore_all_points = cfg.max_explore_all_points;
  limits.max_explore_front_points = cfg.max_explore_front_points;
  limits.max_sequence_steps = cfg.max_sequence_steps;
  limits.max_request_memory_bytes = cfg.max_request_memory_bytes;
  limits.max_plan_candidates = cfg.max_plan_candidates;
  limits.max_concurrent_expensive_calls =
      cfg.max_concurrent_expensive_calls > 0
          ? cfg.max_concurrent_expensive_calls
          : std::max<int64_t>(2, std::thread::hardware_concurrency());
  return limits;
}

}  // namespace ridgeline::service
