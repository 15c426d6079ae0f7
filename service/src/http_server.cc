#include "http_server.h"

#include <openssl/ssl.h>

#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "http_body.h"
#include "work_pool.h"

namespace ridgeline::service {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Parser = http::request_parser<http::string_body>;
using Guard = net::executor_work_guard<net::io_context::executor_type>;

void Configure(Parser& p, const HttpLimits& limits) {
  p.header_limit(limits.max_header_bytes);
  // Beast counts a chunked body as its chunks arrive, and refuses a
  // Content-Length above the limit before reading any of the body.
  p.body_limit(static_cast<std::uint64_t>(limits.max_body_bytes));
}

// The status a read error is refused with (431, 413, 400), or 0 when the
// connection just ends (closed, reset, timed out, cut mid-message).
int RefusalOf(const beast::error_code& ec, const HttpLimits& limits,
              absl::Status* why) {
  if (ec == http::error::header_limit) {
    *why = absl::ResourceExhaustedError(
        absl::StrCat("request: the request line and headers are larger than ",
                     limits.max_header_bytes, " bytes"));
    return 431;
  }
  if (ec == http::error::body_limit) {
    *why = absl::ResourceExhaustedError(
        absl::StrCat("request: body larger than --max-message-bytes (",
                     limits.max_body_bytes, " bytes)"));
    return 413;
  }
  if (ec.category() ==
          http::make_error_code(http::error::bad_method).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message &&
      ec != http::error::need_more) {
    *why = absl::InvalidArgumentError(absl::StrCat(
        "request: not a valid HTTP/1.1 request (", ec.message(), ")"));
    return 400;
  }
  return 0;
}

// The head's own limits, checked before the body is read: 0 or a status.
int CheckHead(const Parser& p, const HttpLimits& limits, absl::Status* why) {
  const auto& head = p.get();
  int fields = 0;
  for (auto it = head.begin(); it != head.end(); ++it) ++fields;
  if (fields > limits.max_header_count) {
    *why = absl::ResourceExhaustedError(absl::StrCat("request: ", fields,
                                                     " header fields; at most ",
                                                     limits.max_header_count));
    return 431;
  }
  const beast::string_view encoding = head[http::field::content_encoding];
  if (absl::Status s = CheckContentEncoding(
          absl::string_view(encoding.data(), encoding.size()));
      !s.ok()) {
    *why = s;
    return 415;
  }
  return 0;
}

// The parsed message as the handler sees it, Content-Encoding undone
// within the body cap: 0 or a status.
int Finish(Parser& p, const HttpLimits& limits, bool tls, HttpRequest* out,
           absl::Status* why) {
  http::request<http::string_body> msg = p.release();
  out->method = std::string(msg.method_string());
  out->target = std::string(msg.target());
  out->tls = tls;
  for (const auto& f : msg) {
    out->headers.emplace_back(std::string(f.name_string()),
                              std::string(f.value()));
  }
  const std::string encoding(msg[http::field::content_encoding]);
  absl::StatusOr<std::string> body =
      DecodeContent(std::move(msg.body()), encoding, limits.max_body_bytes);
  if (!body.ok()) {
    *why = body.status();
    if (absl::IsResourceExhausted(body.status())) return 413;
    if (absl::IsUnimplemented(body.status())) return 415;
    return 400;
  }
  out->body = *std::move(body);
  return 0;
}

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  // Closes the connection soon, on the session's strand (Stop).
  virtual void PostAbort() = 0;
};

}  // namespace

struct HttpServer::Impl {
  Impl(HttpServerOptions o, const HttpHandler& h)
      : options(std::move(o)),
        handler(h),
        ioc(options.io_threads),
        acceptor(ioc),
        guard(ioc.get_executor()) {}

  void Accept();
  void Register(SessionBase* s, std::weak_ptr<SessionBase> w) {
    std::lock_guard<std::mutex> lock(mu);
    sessions.emplace(s, std::move(w));
  }
  void Unregister(SessionBase* s) {
    std::lock_guard<std::mutex> lock(mu);
    sessions.erase(s);
    connections.fetch_sub(1);
  }

  const HttpServerOptions options;
  const HttpHandler& handler;
  // Declared before ioc: a session destroyed with ioc's queued handlers
  // still unregisters.
  std::atomic<int> connections{0};
  std::mutex mu;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions;
  net::io_context ioc;
  std::unique_ptr<net::ssl::context> ssl;  // null: plain HTTP
  tcp::acceptor acceptor;
  net::steady_timer accept_retry{ioc};
  std::optional<Guard> guard;  // keeps run() going until Stop
  std::unique_ptr<WorkPool> pool;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
};

namespace {

// One connection: reads a request (head, then body, within the read
// deadline), hands it to the handler, writes the response, and repeats
// while the client keeps the connection alive. Every step runs on the
// connection's strand; the only thread a session ever holds is a worker's,
// and only while a request whose body has fully arrived computes.
template <class Stream>
class Session : public SessionBase,
                public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  template <class... Args>
  Session(HttpServer::Impl& impl, Args&&... args)
      : impl_(impl), stream_(std::forward<Args>(args)...) {}
  ~Session() override { impl_.Unregister(this); }

  void Start() {
    Lowest().expires_after(Seconds(impl_.options.read_timeout_seconds));
    if constexpr (kTls) {
      stream_.async_handshake(
          net::ssl::stream_base::server,
          [self = this->shared_from_this()](beast::error_code ec) {
            if (ec) return self->Close();
            self->ReadHead();
          });
    } else {
      ReadHead();
    }
  }

  void PostAbort() override {
    net::post(stream_.get_executor(),
              [self = this->shared_from_this()] { self->Abort(); });
  }

 private:
  void Abort() {
    aborted_ = true;
    DropBody();
    beast::error_code ignored;
    Lowest().socket().close(ignored);
  }

  // Cancels a streaming call and lets a worker join its thread: the call
  // notices within one item, which may take a while, and the I/O threads
  // must not wait for it.
  void DropBody() {
    pending_.reset();
    if (body_ == nullptr) return;
    body_->Cancel();
    std::shared_ptr<HttpStream> body = std::move(body_);
    auto holder = std::make_shared<std::shared_ptr<HttpStream>>(body);
    body.reset();
    // Inline when the pool is full (the join then happens here). The guard
    // keeps the I/O threads running until the call's last wakeup (posted
    // before its thread ends) has run, also during Stop.
    (void)impl_.pool->TrySubmit(
        [holder, guard = std::make_shared<Guard>(impl_.ioc.get_executor())] {
          holder->reset();
        });
  }

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void ReadHead() {
    if (aborted_) return;
    parser_.emplace();
    Configure(*parser_, impl_.options.limits);
    // The deadline covers the head and the body together, counted from the
    // previous response: an idle, slow or stalled client is cut at it.
    Lowest().expires_after(Seconds(impl_.options.read_timeout_seconds));
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          self->OnHead(ec);
        });
  }

  void OnHead(beast::error_code ec) {
    if (ec) return RefuseOrClose(ec);
    absl::Status why;
    if (int status = CheckHead(*parser_, impl_.options.limits, &why)) {
      return Refuse(status, why);
    }
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      auto cont = std::make_shared<http::response<http::empty_body>>(
          http::status::continue_, 11);
      http::async_write(stream_, *cont,
                        [self = this->shared_from_this(), cont](
                            beast::error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](
                         beast::error_code ec, size_t) { self->OnBody(ec); });
  }

  void OnBody(beast::error_code ec) {
    if (ec) return RefuseOrClose(ec);
    keep_alive_ = parser_->get().keep_alive();
    auto req = std::make_shared<HttpRequest>();
    absl::Status why;
    const int status =
        Finish(*parser_, impl_.options.limits, kTls, req.get(), &why);
    parser_.reset();
    req_ = req;
    if (status != 0) return Refuse(status, why);
    Lowest().expires_never();  // computing: the deadline is the handler's
    if (impl_.handler.Quick(*req)) return Write(impl_.handler.Handle(*req));
    // The request is complete: a worker computes it and posts the answer
    // back to this connection's strand.
    auto self = this->shared_from_this();
    const bool queued = impl_.pool->TrySubmit(
        [self, req,
         guard = std::make_shared<Guard>(impl_.ioc.get_executor())]() {
          HttpResponse res = self->impl_.handler.Handle(*req);
          net::post(self->stream_.get_executor(),
                    [self, res = std::move(res)]() mutable {
                      self->Write(std::move(res));
                    });
        });
    if (!queued) {
      Write(impl_.handler.Refuse(
          503, absl::UnavailableError(absl::StrCat(
                   "busy: ", impl_.pool->max_queued(),
                   " HTTP requests already wait for a worker; retry"))));
    }
  }

  // A read error: a refusal the client can read (then close), or a close.
  void RefuseOrClose(beast::error_code ec) {
    absl::Status why;
    const int status = RefusalOf(ec, impl_.options.limits, &why);
    if (status == 0) return Close();
    if (parser_.has_value() && parser_->is_header_done()) {
      // The metrics label needs the target; the body is not needed.
      auto req = std::make_shared<HttpRequest>();
      req->method = std::string(parser_->get().method_string());
      req->target = std::string(parser_->get().target());
      req_ = req;
    } else {
      req_.reset();
    }
    Refuse(status, why);
  }

  // An answer after which the rest of the request is not read: the
  // connection closes once it is written.
  void Refuse(int status, const absl::Status& why) {
    keep_alive_ = false;
    Write(impl_.handler.Refuse(status, why));
  }

  void Write(HttpResponse res) {
    if (aborted_) return Close();
    impl_.handler.Answered(req_.get(), res.status);
    ++requests_;
    if (requests_ >= impl_.options.max_requests_per_connection) {
      keep_alive_ = false;
    }
    const bool head = req_ != nullptr && req_->method == "HEAD";
    if (res.stream != nullptr && !head) return WriteStreamHead(std::move(res));
    auto msg = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(res.status), 11);
    if (!res.content_type.empty()) {
      msg->set(http::field::content_type, res.content_type);
    }
    for (const auto& [k, v] : res.headers) msg->insert(k, v);
    if (head) {
      msg->content_length(res.body.size());
    } else {
      msg->body() = std::move(res.body);
      msg->prepare_payload();
    }
    msg->keep_alive(keep_alive_);
    Lowest().expires_after(Seconds(impl_.options.write_timeout_seconds));
    http::async_write(
        stream_, *msg,
        [self = this->shared_from_this(), msg](beast::error_code ec, size_t) {
          self->AfterResponse(ec);
        });
  }

  void AfterResponse(beast::error_code ec) {
    if (ec || !keep_alive_ || aborted_) return Close();
    req_.reset();
    ReadHead();
  }

  // Streaming: the head (chunked), then each line as a chunk when the
  // call has one; the call's thread wakes the strand.
  void WriteStreamHead(HttpResponse res) {
    body_ = std::move(res.stream);
    auto msg = std::make_shared<http::response<http::empty_body>>(
        static_cast<http::status>(res.status), 11);
    msg->set(http::field::content_type, res.content_type);
    for (const auto& [k, v] : res.headers) msg->insert(k, v);
    msg->keep_alive(keep_alive_);
    msg->chunked(true);
    auto sr =
        std::make_shared<http::response_serializer<http::empty_body>>(*msg);
    // The wakeup holds the session while the call computes; it is dropped
    // when the call ends (StreamRelay releases it then).
    body_->SetWakeup([self = this->shared_from_this()] {
      net::post(self->stream_.get_executor(), [self] { self->Pump(); });
    });
    Lowest().expires_after(Seconds(impl_.options.write_timeout_seconds));
    http::async_write_header(stream_, *sr,
                             [self = this->shared_from_this(), msg, sr](
                                 beast::error_code ec, size_t) {
                               if (ec) return self->Close();
                               self->Pump();
                             });
  }

  void Pump() {
    if (writing_ || body_ == nullptr) return;
    if (aborted_) return Close();
    std::string line;
    switch (body_->TryNext(&line)) {
      case HttpStream::Poll::kPending:
        // Nothing to write until the call wakes us: keep the I/O threads'
        // run() going meanwhile, with no deadline on the socket.
        Lowest().expires_never();
        if (!pending_.has_value()) pending_.emplace(impl_.ioc.get_executor());
        return;
      case HttpStream::Poll::kLine:
        pending_.reset();
        chunk_ = std::move(line);
        writing_ = true;
        Lowest().expires_after(Seconds(impl_.options.write_timeout_seconds));
        net::async_write(
            stream_, http::make_chunk(net::buffer(chunk_)),
            [self = this->shared_from_this()](beast::error_code ec, size_t) {
              self->writing_ = false;
              if (ec) return self->Close();  // the client went away
              self->Pump();
            });
        return;
      case HttpStream::Poll::kEnd:
        DropBody();  // the call has ended: the join is immediate
        writing_ = true;
        Lowest().expires_after(Seconds(impl_.options.write_timeout_seconds));
        net::async_write(
            stream_, http::make_chunk_last(),
            [self = this->shared_from_this()](beast::error_code ec, size_t) {
              self->writing_ = false;
              self->AfterResponse(ec);
            });
        return;
    }
  }

  void Close() {
    DropBody();
    if (closing_) return;
    closing_ = true;
    beast::error_code ignored;
    if constexpr (kTls) {
      if (!aborted_) {
        Lowest().expires_after(std::chrono::seconds(2));
        stream_.async_shutdown(
            [self = this->shared_from_this()](beast::error_code) {
              beast::error_code ignored;
              self->Lowest().socket().close(ignored);
            });
        return;
      }
    } else if (!aborted_) {
      // Half-close, then drain what the client still sends for a moment:
      // closing with unread bytes would reset the connection, and the
      // client could lose the refusal it has not read yet.
      Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      Lowest().expires_after(std::chrono::seconds(2));
      return Drain();
    }
    Lowest().socket().close(ignored);
  }

  void Drain() {
    Lowest().async_read_some(
        net::buffer(drain_buf_),
        [self = this->shared_from_this()](beast::error_code ec, size_t n) {
          self->drained_ += n;
          if (ec || self->drained_ > (16 << 20) || self->aborted_) {
            beast::error_code ignored;
            self->Lowest().socket().close(ignored);
            return;
          }
          self->Drain();
        });
  }

  HttpServer::Impl& impl_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  std::shared_ptr<const HttpRequest> req_;  // the one being answered
  bool keep_alive_ = false;
  int requests_ = 0;
  std::shared_ptr<HttpStream> body_;  // a streaming response in progress
  std::string chunk_;                 // the chunk being written
  bool writing_ = false;
  std::optional<Guard> pending_;  // waiting on the stream's call
  bool closing_ = false;
  std::atomic<bool> aborted_{false};
  std::array<char, 16 << 10> drain_buf_;
  size_t drained_ = 0;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec,
                                                      tcp::socket socket) {
    if (ec == net::error::operation_aborted || stopping.load()) return;
    if (!ec) {
      if (connections.load() >= options.max_connections) {
        // Full: refused at once, so probes see a closed connection
        // rather than one that hangs.
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        // A streamed line goes out at once, not after the client's
        // delayed ACK of the previous one (Nagle's algorithm).
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        connections.fetch_add(1);
        std::shared_ptr<SessionBase> base;
        if (ssl != nullptr) {
          auto s =
              std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
                  *this, std::move(socket), *ssl);
          Register(s.get(), s);
          s->Start();
        } else {
          auto s = std::make_shared<Session<beast::tcp_stream>>(
              *this, std::move(socket));
          Register(s.get(), s);
          s->Start();
        }
      }
    } else {
      // Out of descriptors (EMFILE) or memory: retry after a pause rather
      // than spinning; open connections keep being served meanwhile.
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && !stopping.load()) Accept();
      });
      return;
    }
    Accept();
  });
}

HttpServer::HttpServer(HttpServerOptions options, const HttpHandler& handler)
    : impl_(std::make_unique<Impl>(std::move(options), handler)) {}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::connections() const { return impl_->connections.load(); }

absl::StatusOr<int> HttpServer::Start() {
  Impl& m = *impl_;
  if (m.options.tls_setup) {
    m.ssl = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
    if (!m.options.tls_setup(m.ssl->native_handle())) {
      return absl::InternalError("cannot set up TLS for the HTTP port");
    }
  }
  const std::string where = absl::StrCat(m.options.host, ":", m.options.port);
  beast::error_code ec;
  tcp::resolver resolver(m.ioc);
  auto endpoints =
      resolver.resolve(m.options.host, std::to_string(m.options.port),
                       tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for HTTP on ", where, ": ", ec.message()));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  m.acceptor.open(endpoint.protocol(), ec);
  // SO_REUSEADDR only (restart while old connections linger); without
  // SO_REUSEPORT a second server cannot bind a port this one listens on.
  if (!ec) m.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) m.acceptor.bind(endpoint, ec);
  if (!ec) m.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for HTTP on ", where, ": ", ec.message()));
  }
  m.pool = std::make_unique<WorkPool>(m.options.threads, m.options.max_queued);
  m.Accept();
  for (int i = 0; i < m.options.io_threads; ++i) {
    m.threads.emplace_back([&m] { m.ioc.run(); });
  }
  return static_cast<int>(m.acceptor.local_endpoint().port());
}

void HttpServer::Stop() {
  Impl& m = *impl_;
  if (m.stopping.exchange(true)) return;
  if (m.threads.empty()) return;  // never started
  net::post(m.ioc, [&m] {
    beast::error_code ignored;
    m.acceptor.close(ignored);
    std::vector<std::shared_ptr<SessionBase>> open;
    {
      std::lock_guard<std::mutex> lock(m.mu);
      for (auto& [raw, weak] : m.sessions) {
        if (std::shared_ptr<SessionBase> s = weak.lock()) open.push_back(s);
      }
    }
    for (auto& s : open) s->PostAbort();
  });
  // run() returns once every session has ended and every worker has
  // posted its answer back.
  m.guard.reset();
  for (std::thread& t : m.threads) t.join();
  m.threads.clear();
  m.pool.reset();
}

ParsedHttpRequest ParseHttpRequest(absl::string_view bytes,
                                   const HttpLimits& limits, bool tls) {
  ParsedHttpRequest out;
  Parser p;
  Configure(p, limits);
  beast::error_code ec;
  size_t used = 0;
  // The head, then the body, as the server's two reads do.
  for (int phase = 0; phase < 2; ++phase) {
    if (phase == 1) {
      if ((out.refuse = CheckHead(p, limits, &out.why)) != 0) return out;
      p.eager(true);
    }
    while (phase == 0 ? !p.is_header_done() : !p.is_done()) {
      const size_t n = p.put(
          net::const_buffer(bytes.data() + used, bytes.size() - used), ec);
      used += n;
      if (ec == http::error::need_more && n > 0 && used < bytes.size()) {
        ec = {};
        continue;
      }
      if (ec && ec != http::error::need_more) {
        out.refuse = RefusalOf(ec, limits, &out.why);
        if (out.refuse == 0) out.refuse = -1;
        return out;
      }
      if (ec || n == 0) {  // the bytes end before the request does
        out.refuse = -1;
        return out;
      }
    }
  }
  out.keep_alive = p.get().keep_alive();
  out.refuse = Finish(p, limits, tls, &out.request, &out.why);
  return out;
}

}  // namespace ridgeline::service
