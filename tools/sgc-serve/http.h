// http.h - HTTP/1.1 over our own sockets: requests parsed by Boost.Beast's
// parser, responses and Server-Sent Events written here.
//
// Why Beast's parser and our own socket loop: Debian's cpp-httplib (0.11)
// hides the socket, so a plain (non-streaming) request cannot see its
// client leave; Asio's blocking reads ignore SO_RCVTIMEO (they poll again
// on EAGAIN), so timeouts would need the async machinery. Owning the file
// descriptor gives both with poll(2), and Beast still does the part that is
// easy to get wrong: parsing requests (chunked bodies, limits, pipelining).
#ifndef SGC_TOOLS_SGC_SERVE_HTTP_H
#define SGC_TOOLS_SGC_SERVE_HTTP_H

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sgc::serve {

struct http_request {
  std::string method, target, body;
  /// Header names in lower case.
  std::map<std::string, std::string> headers;
  bool keep_alive = true;

  std::string header(const std::string &lower_name) const;
  /// The target without its query string.
  std::string path() const;
};

using http_headers = std::vector<std::pair<std::string, std::string>>;

/// One client connection; used by one thread at a time.
class http_connection {
public:
  http_connection(int fd, std::string peer, int timeout_s,
                  size_t max_body_bytes);
  ~http_connection();
  http_connection(const http_connection &) = delete;
  http_connection &operator=(const http_connection &) = delete;

  enum class read_result { request, closed, bad };
  /// Waits up to |idle_ms| for a request to start (-1: the timeout), then
  /// reads it whole. bad: |*status| (400, 408, 413, 431) and |*error| say
  /// why; the connection must then be answered and closed.
  read_result read(http_request *out, int idle_ms, int *status,
                   std::string *error);

  /// A whole response; false when the client is gone.
  bool send(int status, const std::string &content_type,
            const std::string &body, const http_headers &extra = {});
  /// A chunked text/event-stream response: the head, then events.
  bool start_events(const http_headers &extra = {});
  /// Writes "data: |json|\n\n" as one chunk.
  bool send_event(const std::string &data);
  bool end_events();

  /// The client closed its side or the connection broke (polled now).
  bool client_gone();
  /// Whether the connection stays open after the response.
  bool keep_alive() const { return keep_alive_; }
  void set_keep_alive(bool on) { keep_alive_ = on; }
  const std::string &peer() const { return peer_; }

private:
  bool write_all(const std::string &bytes);

  int fd_;
  std::string peer_;
  int timeout_ms_;
  size_t max_body_;
  bool keep_alive_ = true;
  bool broken_ = false;
  /// Bytes read past the last request (a pipelined next one).
  std::string pending_;
};

/// The listening socket and a pool of workers, each serving one connection
/// at a time with |handler|.
class http_server {
public:
  using handler = std::function<void(http_connection &, const http_request &)>;
  /// Answers a request that could not be read (status 400, 408, 413, 431).
  using bad_request_handler =
      std::function<void(http_connection &, int status, const std::string &)>;

  http_server(int workers, int timeout_s, size_t max_body_bytes, handler h,
              bad_request_handler bad);
  ~http_server();

  /// Binds and listens; false with |*error| set.
  bool listen(const std::string &host, int port, std::string *error);
  int port() const { return port_; }
  /// Accepts until stop(); connections queue for the next free worker.
  void serve();
  void stop();

private:
  void work();
  void serve_connection(int fd, const std::string &peer);

  int workers_, timeout_s_;
  size_t max_body_;
  handler handler_;
  bad_request_handler bad_request_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<int, std::string>> queue_;
  std::vector<std::thread> threads_;
};

/// "OK", "Not Found", ... for a status code.
const char *http_reason(int status);

} // namespace sgc::serve

#endif // SGC_TOOLS_SGC_SERVE_HTTP_H
