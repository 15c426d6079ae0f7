#include "server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpc_std.grpc.pb.h"

namespace ridgeline::testing {
namespace {

std::vector<std::string> BaseArgs() {
  return {RIDGELINE_SERVER_BIN, "--listen=127.0.0.1:0",
          "--metrics-listen=127.0.0.1:0",
          std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR,
          std::string("--profile-dir=") + RIDGELINE_TEST_PROFILE_DIR};
}

pid_t Spawn(const std::vector<std::string>& args, int* out_fd,
            bool merge_stderr, uint64_t address_space_bytes = 0) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    if (merge_stderr) dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    // The server must find none of the caller's environment overrides.
    unsetenv("RIDGELINE_LISTEN");
    unsetenv("RIDGELINE_METRICS_LISTEN");
    unsetenv("RIDGELINE_HTTP_LISTEN");
    if (address_space_bytes > 0) {
      const rlimit as{address_space_bytes, address_space_bytes};
      if (setrlimit(RLIMIT_AS, &as) != 0) _exit(126);
    }
    std::vector<char*> argv;
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

// Reads one line from fd within the deadline.
bool ReadLine(int fd, std::chrono::steady_clock::time_point deadline,
              std::string* line) {
  line->clear();
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char c;
    if (read(fd, &c, 1) != 1) return false;
    if (c == '\n') return true;
    line->push_back(c);
  }
}

int PortOf(const std::string& line) {
  int port = 0;
  if (!absl::SimpleAtoi(line.substr(line.rfind(':') + 1), &port)) return 0;
  return port;
}

}  // namespace

ServerProcess::ServerProcess(const std::vector<std::string>& extra_args,
                             uint64_t address_space_bytes) {
  std::vector<std::string> args = BaseArgs();
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  pid_ = Spawn(args, &stdout_fd_, false, address_space_bytes);
  if (pid_ < 0) {
    error_ = "fork failed";
    return;
  }
  const auto deadline =
      std::chrono::steady_clock::now() + Scaled(std::chrono::seconds(20));
  bool want_http = false;
  for (const std::string& a : extra_args) {
    if (a.rfind("--http-listen", 0) == 0) want_http = true;
  }
  std::string line;
  while ((port_ == 0 || metrics_port_ == 0 || (want_http && http_port_ == 0)) &&
         ReadLine(stdout_fd_, deadline, &line)) {
    if (line.rfind("metrics listening on ", 0) == 0) {
      metrics_port_ = PortOf(line);
    } else if (line.rfind("http listening on ", 0) == 0) {
      http_port_ = PortOf(line);
    } else if (line.rfind("listening on ", 0) == 0) {
      port_ = PortOf(line);
    }
  }
  if (port_ == 0 || metrics_port_ == 0 || (want_http && http_port_ == 0)) {
    error_ = absl::StrCat("server did not print its ports (last line: \"", line,
                          "\")");
  }
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

std::string ServerProcess::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

std::shared_ptr<grpc::Channel> ServerProcess::Channel() const {
  grpc::ChannelArguments args;
  // A fresh connection per channel so tests do not share state.
  args.SetInt("grpc.use_local_subchannel_pool", 1);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address(),
                                   grpc::InsecureChannelCredentials(), args);
}

void ServerProcess::Signal(int sig) const { kill(pid_, sig); }

std::optional<int> ServerProcess::WaitExit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

double TimeScale() {
  static const double scale = [] {
    const char* env = std::getenv("RIDGELINE_TEST_TIME_SCALE");
    double v = 1;
    if (env == nullptr || !absl::SimpleAtod(env, &v) || !(v >= 1)) return 1.0;
    return v;
  }();
  return scale;
}

std::chrono::milliseconds Scaled(std::chrono::milliseconds d) {
  return std::chrono::milliseconds(
      static_cast<int64_t>(static_cast<double>(d.count()) * TimeScale()));
}

bool WaitServing(const std::shared_ptr<grpc::Channel>& channel,
                 std::chrono::milliseconds timeout) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(1));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    if (stub->Check(&ctx, req, &resp).ok() &&
        resp.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  const std::string req =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return "";
  }
  std::string resp;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) resp.append(buf, n);
  close(fd);
  const size_t body = resp.find("\r\n\r\n");
  return body == std::string::npos ? "" : resp.substr(body + 4);
}

std::optional<double> MetricValue(const std::string& exposition,
                                  const std::string& name,
                                  const std::vector<std::string>& labels) {
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (line.substr(0, name.size() + 1) != name + "{" &&
        line.substr(0, name.size() + 1) != name + " ") {
      continue;
    }
    bool all = true;
    for (const std::string& l : labels) {
      if (line.find(l) == absl::string_view::npos) all = false;
    }
    if (!all) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) return v;
  }
  return std::nullopt;
}

int RunServerBinary(const std::vector<std::string>& args, std::string* output) {
  std::vector<std::string> all = {RIDGELINE_SERVER_BIN};
  all.insert(all.end(), args.begin(), args.end());
  int fd = -1;
  pid_t pid = Spawn(all, &fd, true);
  output->clear();
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) output->append(buf, n);
  close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace ridgeline::testing
