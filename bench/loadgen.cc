// ridgeline_loadgen: a bounded gRPC load generator for ridgeline-server on
// loopback. Analyze mode keeps --concurrency RPCs in flight with gRPC's
// callback API; Sweep mode runs --concurrency threads, each streaming whole
// sweeps; step-stream mode keeps one StepTimeStream open with up to
// --concurrency messages in flight, each of --steps-per-message steps of
// --step-seqs mixed sequences (the scheduler's loop, pipelined).
// http-analyze mode drives POST /v1/Analyze of the HTTP/JSON frontend
// (--http-target) with --concurrency threads, each on one keep-alive
// connection, sending the same request as proto3 JSON. --mode takes a
// comma-separated list (analyze,http-analyze): the modes run one after the
// other against the same server and each gets its own report.
// Mixed mode (the soak, scripts/soak.sh) runs --concurrency threads issuing
// a weighted mix of valid, invalid and cancelled Analyze calls and streamed
// Sweeps, and counts each kind's outcomes by code.
// Stops at --requests OR --duration, whichever comes first. Reports
// requests/s (points/s for sweeps), latency percentiles, errors by code and,
// with --metrics, the server's engine time as a share of its RPC time
// (ridgeline_engine_seconds_sum vs grpc_server_handling_seconds_sum,
// scraped before and after).
//
// The client must cost less than the server per request, or it measures
// itself: each in-flight slot reuses its response message and latency
// buffer (no per-request allocation besides gRPC's own), results are merged
// once at the end, and --cpus pins the process (and so every gRPC thread it
// creates) to chosen cores, away from the server's.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "httplib.h"
#include "loadgen_common.h"
#include "loadgen_mixed.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"

namespace ridgeline::loadgen {
namespace {


const char kUsage[] =
    "usage: ridgeline_loadgen [flags]\n"
    "  --target HOST:PORT     loopback gRPC address (default 127.0.0.1:50051)\n"
    "  --metrics HOST:PORT    loopback metrics address: report engine share\n"
    "  --http-target HOST:PORT  loopback HTTP/JSON address (http-analyze)\n"
    "  --mode analyze|sweep|step-stream|http-analyze|mixed[,...]  (default\n"
    "                         analyze); a list runs each mode in turn\n"
    "  --requests N           stop after N RPCs (default 200000)\n"
    "  --duration SECONDS     stop after this long (default 10)\n"
    "  --concurrency N        RPCs in flight / sweep threads (default 32)\n"
    "  --channels N           TCP connections (default 4)\n"
    "  --model ID --hardware ID --batch N --prompt N --gen N\n"
    "                         the Analyze scenario (default llama-3-8b on\n"
    "                         nvidia-h100-sxm-80gb, batch 1, 512 + 128)\n"
    "  --suggestions          ask for what-if suggestions (off by default)\n"
    "  --view full|basic      Analyze response view (default full; basic\n"
    "                         leaves out the per-op tables)\n"
    "  --cpus N,...           pin the load generator to these CPU numbers\n"
    "  --sweep-batches N,...  sweep mode: batch sizes per sweep (default\n"
    "                         1,2,4,8,16,32,64,128: 8 points per Sweep)\n"
    "  --steps-per-message N  step-stream mode: steps per message (default 16)\n"
    "  --step-seqs N          step-stream mode: sequences per step, 60 decode\n"
    "                         tokens to 4 prefill chunks (default 64)\n"
    "  --step-columns         step-stream mode: send each step's sequences as\n"
    "                         the context_tokens / new_tokens columns instead\n"
    "                         of one StepSequence message each\n"
    "  --mix V:I:C:S          mixed mode: weights of valid, invalid (prompt\n"
    "                         0: INVALID_ARGUMENT), cancelled (cancelled by\n"
    "                         the client right after it starts) Analyze\n"
    "                         calls and Sweeps (default 10:3:3:4)\n";

// Loopback only: a load generator must not be pointed at someone else.
bool IsLoopback(const std::string& host_port) {
  std::string host = host_port.substr(0, host_port.rfind(':'));
  if (host == "localhost" || host == "[::1]" || host == "::1") return true;
  in_addr addr{};
  return inet_pton(AF_INET, host.c_str(), &addr) == 1 &&
         (ntohl(addr.s_addr) >> 24) == 127;
}

bool ParseArgs(int argc, char** argv, Options* o, std::string* error) {
  auto next = [&](int& i) -> std::optional<std::string> {
    if (i + 1 >= argc) return std::nullopt;
    return std::string(argv[++i]);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::optional<std::string> v;
    auto need = [&]() {
      v = next(i);
      if (!v) *error = a + " needs a value";
      return v.has_value();
    };
    auto as_int = [&](int64_t* out, int64_t min) {
      if (!need()) return false;
      char* end = nullptr;
      *out = std::strtoll(v->c_str(), &end, 10);
      if (*end != '\0' || *out < min) {
        *error = a + ": expected an integer >= " + std::to_string(min) +
                 ", got '" + *v + "'";
        return false;
      }
      return true;
    };
    int64_t n = 0;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--target") {
      if (!need()) return false;
      o->target = *v;
    } else if (a == "--metrics") {
      if (!need()) return false;
      o->metrics = *v;
    } else if (a == "--http-target") {
      if (!need()) return false;
      o->http_target = *v;
    } else if (a == "--mode") {
      if (!need()) return false;
      o->modes.clear();
      std::stringstream ss(*v);
      for (std::string m; std::getline(ss, m, ',');) {
        if (m != "analyze" && m != "sweep" && m != "step-stream" &&
            m != "http-analyze" && m != "mixed") {
          *error =
              "--mode: expected analyze, sweep, step-stream, http-analyze "
              "or mixed, got '" + m + "'";
          return false;
        }
        o->modes.push_back(m);
      }
      if (o->modes.empty()) {
        *error = "--mode: empty";
        return false;
      }
    } else if (a == "--requests") {
      if (!as_int(&o->requests, 1)) return false;
    } else if (a == "--duration") {
      if (!as_int(&n, 1)) return false;
      o->duration_seconds = static_cast<double>(n);
    } else if (a == "--concurrency") {
      if (!as_int(&n, 1)) return false;
      o->concurrency = static_cast<int>(std::min<int64_t>(n, 4096));
    } else if (a == "--channels") {
      if (!as_int(&n, 1)) return false;
      o->channels = static_cast<int>(std::min<int64_t>(n, 64));
    } else if (a == "--model") {
      if (!need()) return false;
      o->model = *v;
    } else if (a == "--hardware") {
      if (!need()) return false;
      o->hardware = *v;
    } else if (a == "--batch") {
      if (!as_int(&o->batch, 1)) return false;
    } else if (a == "--prompt") {
      if (!as_int(&o->prompt, 1)) return false;
    } else if (a == "--gen") {
      if (!as_int(&o->gen, 0)) return false;
    } else if (a == "--suggestions") {
      o->suggestions = true;
    } else if (a == "--view") {
      if (!need()) return false;
      if (*v == "full") {
        o->view = v1::ANALYSIS_VIEW_FULL;
      } else if (*v == "basic") {
        o->view = v1::ANALYSIS_VIEW_BASIC;
      } else {
        *error = "--view: expected full or basic, got '" + *v + "'";
        return false;
      }
    } else if (a == "--cpus") {
      if (!need()) return false;
      std::stringstream ss(*v);
      for (std::string item; std::getline(ss, item, ',');) {
        char* end = nullptr;
        const long cpu = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || cpu < 0 || cpu >= CPU_SETSIZE) {
          *error =
              "--cpus: expected CPU numbers like 0 or 0,1, got '" + *v + "'";
          return false;
        }
        o->cpus.push_back(static_cast<int>(cpu));
      }
    } else if (a == "--steps-per-message") {
      if (!as_int(&o->steps_per_message, 1)) return false;
    } else if (a == "--step-seqs") {
      if (!as_int(&o->step_seqs, 1)) return false;
    } else if (a == "--step-columns") {
      o->step_columns = true;
    } else if (a == "--mix") {
      if (!need()) return false;
      o->mix.clear();
      std::stringstream ss(*v);
      for (std::string item; std::getline(ss, item, ':');) {
        char* end = nullptr;
        const long long w = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || w < 0) break;
        o->mix.push_back(w);
      }
      if (o->mix.size() != 4 ||
          o->mix[0] + o->mix[1] + o->mix[2] + o->mix[3] == 0) {
        *error = "--mix: expected four weights V:I:C:S (integers >= 0, not "
                 "all 0), got '" + *v + "'";
        return false;
      }
    } else if (a == "--sweep-batches") {
      if (!need()) return false;
      o->sweep_batches.clear();
      std::stringstream ss(*v);
      for (std::string item; std::getline(ss, item, ',');) {
        o->sweep_batches.push_back(std::atoll(item.c_str()));
      }
    } else {
      *error = "unknown flag " + a;
      return false;
    }
  }
  if (std::find(o->modes.begin(), o->modes.end(), "http-analyze") !=
          o->modes.end() &&
      o->http_target.empty()) {
    *error = "--mode http-analyze needs --http-target HOST:PORT";
    return false;
  }
  for (const std::string* t : {&o->target, &o->metrics, &o->http_target}) {
    if (!t->empty() && !IsLoopback(*t)) {
      *error = "refusing non-loopback address '" + *t +
               "': the load generator only targets 127.0.0.0/8, localhost "
               "or [::1]";
      return false;
    }
  }
  return true;
}

// --- metrics scraping -------------------------------------------------------

std::string HttpGet(const std::string& host_port, const std::string& path) {
  std::string host = host_port.substr(0, host_port.rfind(':'));
  if (host == "localhost") host = "127.0.0.1";
  int port = std::atoi(host_port.substr(host_port.rfind(':') + 1).c_str());
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  std::string body;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    std::string req = "GET " + path + " HTTP/1.0\r\nHost: " + host_port +
                      "\r\nConnection: close\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[65536];
      for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
        body.append(buf, n);
    }
  }
  close(fd);
  size_t start = body.find("\r\n\r\n");
  return start == std::string::npos ? "" : body.substr(start + 4);
}

// Sum of every sample of `name` whose labels contain all of `labels`.
double SumSamples(const std::string& text, const std::string& name,
                  const std::vector<std::string>& labels) {
  double sum = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0) continue;
    char after = line.size() > name.size() ? line[name.size()] : '\0';
    if (after != '{' && after != ' ') continue;
    bool match = std::all_of(labels.begin(), labels.end(), [&](const auto& l) {
      return line.find(l) != std::string::npos;
    });
    if (match) sum += std::atof(line.substr(line.rfind(' ') + 1).c_str());
  }
  return sum;
}

struct ServerSample {
  double engine_seconds = 0;
  double engine_count = 0;
  double handling_seconds = 0;
};

std::optional<ServerSample> Scrape(const Options& o,
                                   const std::string& method) {
  if (o.metrics.empty()) return std::nullopt;
  std::string text = HttpGet(o.metrics, "/metrics");
  if (text.empty()) return std::nullopt;
  // The HTTP frontend's own series for its requests (http_metrics.h).
  const double handling =
      o.mode == "http-analyze"
          ? SumSamples(text, "http_server_request_duration_seconds_sum",
                       {"method=\"" + method + "\""})
          : SumSamples(text, "grpc_server_handling_seconds_sum",
                       {"grpc_method=\"" + method + "\""});
  return ServerSample{SumSamples(text, "ridgeline_engine_seconds_sum", {}),
                      SumSamples(text, "ridgeline_engine_seconds_count", {}),
                      handling};
}

// --- load -------------------------------------------------------------------

struct Results {
  std::mutex mu;
  std::vector<double> latencies;          // seconds, successful RPCs
  std::map<std::string, int64_t> errors;  // by code name + first message
  int64_t points = 0;
};

void RecordError(Results* r, const grpc::Status& s) {
  std::lock_guard<std::mutex> lock(r->mu);
  std::string key =
      std::to_string(s.error_code()) + " " + s.error_message().substr(0, 120);
  ++r->errors[key];
}



// Keeps `concurrency` Analyze RPCs in flight with the callback API. Each
// slot owns its response and latency buffer; the completion callback of one
// RPC issues the slot's next, so no lock is taken per request.
class AnalyzeLoad {
 public:
  AnalyzeLoad(const Options& o, Results* results)
      : options_(o), results_(results), request_(MakeAnalyze(o)) {
    for (const auto& ch : MakeChannels(o)) {
      stubs_.push_back(v1::RidgelineService::NewStub(ch));
    }
    slots_ = std::make_unique<Slot[]>(static_cast<size_t>(o.concurrency));
    const size_t expected = static_cast<size_t>(
        std::min<int64_t>(o.requests / o.concurrency + 1, 1 << 20));
    for (int i = 0; i < o.concurrency; ++i) {
      slots_[i].latencies.reserve(expected);
    }
  }

  void Run() {
    start_ = Clock::now();
    end_ =
        start_ + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(options_.duration_seconds));
    in_flight_.store(options_.concurrency);
    for (int i = 0; i < options_.concurrency; ++i) Issue(i);
    {
      std::unique_lock<std::mutex> lock(mu_);
      done_cv_.wait(lock, [&] { return in_flight_.load() == 0; });
    }
    for (int i = 0; i < options_.concurrency; ++i) {
      const std::vector<double>& l = slots_[i].latencies;
      results_->latencies.insert(results_->latencies.end(), l.begin(), l.end());
    }
  }

 private:
  // A FULL response (4 steps x 14 ops, ~10 KB on the wire) parses into
  // ~40 KB of arena; the first block is inline so a call allocates nothing.
  static constexpr size_t kArenaBlock = 64 << 10;

  struct Slot {
    Slot() : arena(ArenaOptions(block.get())) {}
    static google::protobuf::ArenaOptions ArenaOptions(char* block) {
      google::protobuf::ArenaOptions o;
      o.initial_block = block;
      o.initial_block_size = kArenaBlock;
      return o;
    }
    std::optional<grpc::ClientContext> context;  // one per RPC (gRPC rule)
    std::unique_ptr<char[]> block{new char[kArenaBlock]};
    google::protobuf::Arena arena;  // the response lives here; Reset per RPC
    v1::AnalyzeResponse* response = nullptr;
    Clock::time_point start;
    std::vector<double> latencies;
  };

  // Claims one request from the budget; false when time or count is spent.
  bool Claim() {
    if (Clock::now() >= end_) return false;
    return issued_.fetch_add(1, std::memory_order_relaxed) < options_.requests;
  }

  void Issue(int index) {
    if (!Claim()) {
      SlotDone();
      return;
    }
    Slot& slot = slots_[index];
    slot.context.emplace();
    slot.context->set_deadline(std::chrono::system_clock::now() +
                               std::chrono::seconds(30));
    slot.arena.Reset();
    slot.response = google::protobuf::Arena::CreateMessage<v1::AnalyzeResponse>(
        &slot.arena);
    slot.start = Clock::now();
    auto& stub = stubs_[static_cast<size_t>(index) % stubs_.size()];
    stub->async()->Analyze(
        &*slot.context, &request_, slot.response,
        [this, index](grpc::Status status) { Completed(index, status); });
  }

  void Completed(int index, const grpc::Status& status) {
    Slot& slot = slots_[index];
    const double seconds =
        std::chrono::duration<double>(Clock::now() - slot.start).count();
    if (status.ok()) {
      slot.latencies.push_back(seconds);
    } else {
      RecordError(results_, status);
    }
    Issue(index);
  }

  void SlotDone() {
    if (in_flight_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_all();
    }
  }

  const Options& options_;
  Results* results_;
  const v1::AnalyzeRequest request_;
  std::vector<std::unique_ptr<v1::RidgelineService::Stub>> stubs_;
  std::unique_ptr<Slot[]> slots_;  // one per in-flight RPC; never moved
  Clock::time_point start_, end_;
  std::atomic<int64_t> issued_{0};
  std::atomic<int> in_flight_{0};  // slots still issuing
  std::mutex mu_;
  std::condition_variable done_cv_;
};

// `concurrency` threads, each streaming whole sweeps back to back.
void SweepLoad(const Options& o, Results* results) {
  v1::SweepRequest req;
  req.add_models()->set_catalog_id(o.model);
  req.add_hardware()->set_platform_id(o.hardware);
  for (int64_t b : o.sweep_batches) req.add_batch_sizes(b);
  req.add_prompt_tokens(o.prompt);
  req.add_generated_tokens(o.gen);
  auto channels = MakeChannels(o);
  auto end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(o.duration_seconds));
  std::atomic<int64_t> issued{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < o.concurrency; ++t) {
    threads.emplace_back([&, t] {
      auto stub = v1::RidgelineService::NewStub(channels[t % channels.size()]);
      while (Clock::now() < end && issued.fetch_add(1) < o.requests) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(60));
        auto start = Clock::now();
        auto reader = stub->Sweep(&context, req);
        v1::SweepPoint point;
        int64_t points = 0;
        while (reader->Read(&point)) ++points;
        grpc::Status status = reader->Finish();
        double seconds =
            std::chrono::duration<double>(Clock::now() - start).count();
        if (status.ok()) {
          std::lock_guard<std::mutex> lock(results->mu);
          results->latencies.push_back(seconds);
          results->points += points;
        } else {
          RecordError(results, status);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
}

// One StepTimeStream: a writer thread keeps up to --concurrency messages in
// flight, this thread reads the answers in order. Latency is per message
// (write to its answer); points count the steps answered.
void StepStreamLoad(const Options& o, Results* results) {
  v1::StepTimeStreamRequest req;
  v1::StepScenario* sc = req.mutable_scenario();
  sc->mutable_model()->set_catalog_id(o.model);
  sc->mutable_hardware()->set_platform_id(o.hardware);
  sc->mutable_capacity()->set_max_sequences(o.step_seqs);
  sc->mutable_capacity()->set_max_context_tokens(8192);
  for (int64_t k = 0; k < o.steps_per_message; ++k) {
    v1::Step* step = req.add_steps();
    for (int64_t i = 0; i < o.step_seqs; ++i) {
      // 15 of 16 sequences decode at spread contexts; every 16th is a
      // prefill chunk of 256 tokens.
      const bool chunk = i % 16 == 15;
      const int64_t context = chunk ? 256 * (i % 4) : 100 + 37 * i + k;
      const int64_t added = chunk ? 256 : 1;
      if (o.step_columns) {
        step->add_context_tokens(context);
        step->add_new_tokens(added);
      } else {
        v1::StepSequence* q = step->add_sequences();
        q->set_context_tokens(context);
        q->set_new_tokens(added);
      }
    }
  }
  auto channel = MakeChannels(o)[0];
  auto stub = v1::RidgelineService::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(static_cast<int64_t>(
                           o.duration_seconds + 60)));
  auto stream = stub->StepTimeStream(&context);
  const auto end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(o.duration_seconds));
  const size_t window = static_cast<size_t>(std::max(o.concurrency, 1));
  std::vector<Clock::time_point> sent(window);
  std::mutex mu;
  std::condition_variable cv;
  int64_t written = 0, answered = 0;  // guarded by mu
  bool done_writing = false;          // guarded by mu
  bool done_reading = false;          // guarded by mu: the stream ended
  std::thread writer([&] {
    for (int64_t id = 0; id < o.requests && Clock::now() < end; ++id) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] {
          return done_reading || written - answered < (int64_t)window;
        });
        if (done_reading) break;  // e.g. a bad scenario ended the stream
        sent[static_cast<size_t>(id) % window] = Clock::now();
        ++written;
      }
      req.set_id(static_cast<uint64_t>(id));
      if (!stream->Write(req)) break;
      if (id == 0) req.clear_scenario();  // only the first message has it
    }
    // Half-close here: the reader may be blocked in Read() with every
    // message answered; the server then ends the stream.
    stream->WritesDone();
    std::lock_guard<std::mutex> lock(mu);
    done_writing = true;
    cv.notify_all();
  });
  v1::StepTimeResponse resp;
  std::vector<double> latencies;
  int64_t steps = 0, step_errors = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu);
      if (done_writing && answered == written) break;
    }
    if (!stream->Read(&resp)) break;
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mu);
    latencies.push_back(std::chrono::duration<double>(
                            now - sent[resp.id() % window]).count());
    ++answered;
    steps += resp.steps_size();
    for (const v1::StepTimeResult& r : resp.steps()) {
      if (r.error_code() != 0) ++step_errors;
    }
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    done_reading = true;
    cv.notify_all();
  }
  writer.join();
  while (stream->Read(&resp)) {
  }
  grpc::Status status = stream->Finish();
  if (!status.ok()) RecordError(results, status);
  std::lock_guard<std::mutex> lock(results->mu);
  results->latencies = std::move(latencies);
  results->points = steps;
  if (step_errors > 0) results->errors["step error_code != 0"] += step_errors;
}

// `concurrency` threads, each with one keep-alive HTTP connection, posting
// the Analyze request as proto3 JSON back to back. The body is read whole
// and its status checked, not parsed: a JSON parse would cost the client
// more than the server's engine.
void HttpAnalyzeLoad(const Options& o, Results* results) {
  std::string body;
  google::protobuf::util::JsonPrintOptions print;
  if (!google::protobuf::util::MessageToJsonString(MakeAnalyze(o), &body,
                                                   print)
           .ok()) {
    ++results->errors["cannot print the request as JSON"];
    return;
  }
  std::string host = o.http_target.substr(0, o.http_target.rfind(':'));
  if (host.size() >= 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  const int port =
      std::atoi(o.http_target.substr(o.http_target.rfind(':') + 1).c_str());
  const auto end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(o.duration_seconds));
  std::atomic<int64_t> issued{0};
  std::vector<std::vector<double>> latencies(
      static_cast<size_t>(o.concurrency));
  std::vector<std::thread> threads;
  for (int t = 0; t < o.concurrency; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client client(host, port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);  // headers and body are separate writes
      client.set_read_timeout(30, 0);
      std::vector<double>& mine = latencies[static_cast<size_t>(t)];
      while (Clock::now() < end && issued.fetch_add(1) < o.requests) {
        const auto start = Clock::now();
        httplib::Result r =
            client.Post("/v1/Analyze", body, "application/json");
        const double seconds =
            std::chrono::duration<double>(Clock::now() - start).count();
        if (r && r->status == 200) {
          mine.push_back(seconds);
        } else {
          std::lock_guard<std::mutex> lock(results->mu);
          ++results->errors[r ? "HTTP " + std::to_string(r->status) + " " +
                                    r->body.substr(0, 120)
                              : "transport: " + httplib::to_string(r.error())];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& l : latencies) {
    results->latencies.insert(results->latencies.end(), l.begin(), l.end());
  }
}



}  // namespace

std::vector<std::shared_ptr<grpc::Channel>> MakeChannels(const Options& o) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < o.channels; ++i) {
    grpc::ChannelArguments args;
    // Distinct args keep gRPC from sharing one subchannel (one TCP
    // connection) between the channels.
    args.SetInt("ridgeline.loadgen.channel", i);
    channels.push_back(grpc::CreateCustomChannel(
        o.target, grpc::InsecureChannelCredentials(), args));
  }
  return channels;
}

v1::AnalyzeRequest MakeAnalyze(const Options& o) {
  v1::AnalyzeRequest req;
  req.mutable_model()->set_catalog_id(o.model);
  req.mutable_hardware()->set_platform_id(o.hardware);
  req.mutable_workload()->set_batch(o.batch);
  req.mutable_workload()->set_prompt_tokens(o.prompt);
  req.mutable_workload()->set_generated_tokens(o.gen);
  req.mutable_options()->set_suggestions(o.suggestions);
  req.set_view(o.view);
  return req;
}

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * (sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

namespace {

int RunMode(const Options& o);

int Main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!ParseArgs(argc, argv, &o, &error)) {
    std::fprintf(stderr, "ridgeline_loadgen: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  if (!o.cpus.empty()) {
    // Before any gRPC thread exists, so they all inherit the mask.
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : o.cpus) CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
      std::fprintf(stderr, "ridgeline_loadgen: --cpus: sched_setaffinity: %s\n",
                   std::strerror(errno));
      return 2;
    }
  }
  // gRPC locks absl::Mutex; Debian's absl keeps a deadlock-detection lock
  // graph on every Lock/Unlock unless told not to.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  int status = 0;
  for (size_t i = 0; i < o.modes.size(); ++i) {
    if (i > 0) std::printf("\n");
    o.mode = o.modes[i];
    status |= RunMode(o);
  }
  return status;
}

// One mode's load and report; 1 when a request failed.
int RunMode(const Options& o) {
  const std::string method = o.mode == "step-stream" ? "StepTimeStream"
                             : o.mode == "sweep"     ? "Sweep"
                                                     : "Analyze";
  std::optional<ServerSample> before = Scrape(o, method);
  Results results;
  auto start = Clock::now();
  if (o.mode == "mixed") {
    KindResults mixed[kKinds];
    MixedLoad(o, mixed);
    const double wall =
        std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("mode mixed (valid:invalid:cancelled:sweep %lld:%lld:%lld:"
                "%lld), target %s, concurrency %d, channels %d\n",
                static_cast<long long>(o.mix[0]),
                static_cast<long long>(o.mix[1]),
                static_cast<long long>(o.mix[2]),
                static_cast<long long>(o.mix[3]), o.target.c_str(),
                o.concurrency, o.channels);
    std::printf("scenario %s on %s, batch %lld, prompt %lld, gen %lld; "
                "sweeps of %zu points\n",
                o.model.c_str(), o.hardware.c_str(),
                static_cast<long long>(o.batch),
                static_cast<long long>(o.prompt),
                static_cast<long long>(o.gen), o.sweep_batches.size());
    return ReportMixed(mixed, wall) == 0 ? 0 : 1;
  }
  if (o.mode == "analyze") {
    AnalyzeLoad(o, &results).Run();
  } else if (o.mode == "http-analyze") {
    HttpAnalyzeLoad(o, &results);
  } else if (o.mode == "step-stream") {
    StepStreamLoad(o, &results);
  } else {
    SweepLoad(o, &results);
  }
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  std::optional<ServerSample> after = Scrape(o, method);

  std::vector<double>& lat = results.latencies;
  std::sort(lat.begin(), lat.end());
  int64_t errors = 0;
  for (const auto& [_, n] : results.errors) errors += n;
  double client_seconds = 0;
  for (double l : lat) client_seconds += l;

  if (o.mode == "http-analyze") {
    std::printf("mode %s, target http://%s/v1/Analyze, concurrency %d "
                "(one keep-alive connection each)\n",
                o.mode.c_str(), o.http_target.c_str(), o.concurrency);
  } else {
    std::printf("mode %s, target %s, concurrency %d, channels %d\n",
                o.mode.c_str(), o.target.c_str(), o.concurrency, o.channels);
  }
  std::printf(
      "scenario %s on %s, batch %lld, prompt %lld, gen %lld%s, view %s\n",
      o.model.c_str(), o.hardware.c_str(), static_cast<long long>(o.batch),
      static_cast<long long>(o.prompt), static_cast<long long>(o.gen),
      o.suggestions ? ", with suggestions" : ", no suggestions",
      o.view == v1::ANALYSIS_VIEW_BASIC ? "basic" : "full");
  std::printf("requests %zu ok, %lld errors in %.2f s: %.0f requests/s\n",
              lat.size(), static_cast<long long>(errors), wall,
              static_cast<double>(lat.size()) / wall);
  if (o.mode == "step-stream") {
    std::printf(
        "steps %lld (%lld per message, %lld sequences each) over one stream: "
        "%.0f steps/s; latency below is per message\n",
        static_cast<long long>(results.points),
        static_cast<long long>(o.steps_per_message),
        static_cast<long long>(o.step_seqs),
        static_cast<double>(results.points) / wall);
    // The load generator's own CPU (serializing requests, parsing answers,
    // gRPC): with the server on the same cores, part of what a step costs.
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    std::printf("client cpu %.2f s: %.2f us per step (%s)\n", cpu,
                results.points > 0 ? cpu / static_cast<double>(results.points) * 1e6 : 0,
                o.step_columns ? "context_tokens / new_tokens columns"
                               : "one StepSequence message per sequence");
  }
  if (o.mode == "sweep") {
    std::printf("sweep points %lld: %.0f points/s\n",
                static_cast<long long>(results.points),
                static_cast<double>(results.points) / wall);
  }
  std::printf("latency ms: p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n",
              Percentile(lat, 0.5) * 1e3, Percentile(lat, 0.9) * 1e3,
              Percentile(lat, 0.99) * 1e3, lat.empty() ? 0 : lat.back() * 1e3);
  for (const auto& [key, n] : results.errors) {
    std::printf("error x%lld: code %s\n", static_cast<long long>(n),
                key.c_str());
  }
  if (before && after) {
    double engine = after->engine_seconds - before->engine_seconds;
    double count = after->engine_count - before->engine_count;
    double handling = after->handling_seconds - before->handling_seconds;
    std::printf(
        "server: %.0f engine analyses, %.1f us each; engine time = %.1f%% of "
        "server handling time, %.1f%% of client-observed latency\n",
        count, count > 0 ? engine / count * 1e6 : 0,
        handling > 0 ? engine / handling * 100 : 0,
        client_seconds > 0 ? engine / client_seconds * 100 : 0);
  } else if (!o.metrics.empty()) {
    std::printf("server: metrics at %s could not be scraped\n",
                o.metrics.c_str());
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ridgeline::loadgen

int main(int argc, char** argv) { return ridgeline::loadgen::Main(argc, argv); }
