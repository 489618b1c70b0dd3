// http.cc - sockets, Beast's request parser, responses, events.
#include "tools/sgc-serve/http.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sgc::serve {

namespace beast_http = boost::beast::http;

const char *http_reason(int status) {
  switch (status) {
  case 100: return "Continue";
  case 200: return "OK";
  case 204: return "No Content";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 413: return "Payload Too Large";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 501: return "Not Implemented";
  case 503: return "Service Unavailable";
  default: return "Unknown";
  }
}

std::string http_request::header(const std::string &lower_name) const {
  const auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

std::string http_request::path() const {
  return target.substr(0, target.find('?'));
}

http_connection::http_connection(int fd, std::string peer, int timeout_s,
                                 size_t max_body_bytes)
    : fd_(fd), peer_(std::move(peer)), timeout_ms_(timeout_s * 1000),
      max_body_(max_body_bytes) {}

http_connection::~http_connection() { ::close(fd_); }

http_connection::read_result
http_connection::read(http_request *out, int idle_ms, int *status,
                      std::string *error) {
  beast_http::request_parser<beast_http::string_body> parser;
  parser.header_limit(64 * 1024);
  parser.body_limit(max_body_);
  parser.eager(true);
  bool started = !pending_.empty(), continued = false;
  char chunk[65536];
  const auto bad = [&](int code, const std::string &why) {
    *status = code;
    *error = why;
    keep_alive_ = false;
    return read_result::bad;
  };
  while (!parser.is_done()) {
    if (!pending_.empty()) {
      boost::beast::error_code ec;
      const size_t used = parser.put(
          boost::asio::const_buffer(pending_.data(), pending_.size()), ec);
      pending_.erase(0, used);
      if (ec == beast_http::error::body_limit)
        return bad(413, "the request body is larger than --max-body-bytes (" +
                            std::to_string(max_body_) + ")");
      if (ec == beast_http::error::header_limit)
        return bad(431, "the request's headers are larger than 64 KiB");
      if (ec && ec != beast_http::error::need_more)
        return bad(400, "malformed HTTP request: " + ec.message());
      if (parser.is_done())
        break;
      // curl asks before sending a large body.
      if (parser.is_header_done() && !continued) {
        continued = true;
        const auto &h = parser.get();
        const auto expect = h[boost::beast::http::field::expect];
        if (boost::beast::iequals(expect, "100-continue"))
          write_all("HTTP/1.1 100 Continue\r\n\r\n");
      }
      if (!ec && used > 0)
        continue;
    }
    pollfd p{fd_, POLLIN, 0};
    const int wait = started ? timeout_ms_ : (idle_ms < 0 ? timeout_ms_ : idle_ms);
    const int ready = ::poll(&p, 1, wait);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      return started ? bad(408, "the request did not arrive within --timeout")
                     : read_result::closed;
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (!started)
        return read_result::closed;
      keep_alive_ = false;
      return read_result::closed; // the client left mid-request
    }
    started = true;
    pending_.append(chunk, static_cast<size_t>(n));
  }
  auto message = parser.release();
  out->method = std::string(message.method_string());
  out->target = std::string(message.target());
  out->body = std::move(message.body());
  out->headers.clear();
  for (const auto &field : message) {
    std::string name(field.name_string());
    for (char &c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out->headers[name] = std::string(field.value());
  }
  out->keep_alive = message.keep_alive();
  keep_alive_ = out->keep_alive;
  return read_result::request;
}

bool http_connection::write_all(const std::string &bytes) {
  size_t done = 0;
  while (!broken_ && done < bytes.size()) {
    pollfd p{fd_, POLLOUT, 0};
    const int ready = ::poll(&p, 1, timeout_ms_);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0) {
      broken_ = true;
      break;
    }
    const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done,
                             MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0) {
      broken_ = true;
      break;
    }
    done += static_cast<size_t>(n);
  }
  return !broken_;
}

static std::string head(int status, const http_headers &extra) {
  std::string h = "HTTP/1.1 " + std::to_string(status) + " " +
                  http_reason(status) + "\r\nServer: sgc-serve\r\n";
  for (const auto &[name, value] : extra)
    h += name + ": " + value + "\r\n";
  return h;
}

bool http_connection::send(int status, const std::string &content_type,
                           const std::string &body, const http_headers &extra) {
  std::string bytes = head(status, extra);
  if (!content_type.empty())
    bytes += "Content-Type: " + content_type + "\r\n";
  bytes += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  bytes += keep_alive_ ? "Connection: keep-alive\r\n\r\n"
                       : "Connection: close\r\n\r\n";
  bytes += body;
  return write_all(bytes);
}

bool http_connection::start_events(const http_headers &extra) {
  std::string bytes = head(200, extra);
  bytes += "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
           "Transfer-Encoding: chunked\r\n";
  bytes += keep_alive_ ? "Connection: keep-alive\r\n\r\n"
                       : "Connection: close\r\n\r\n";
  return write_all(bytes);
}

bool http_connection::send_event(const std::string &data) {
  const std::string event = "data: " + data + "\n\n";
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", event.size());
  return write_all(size + event + "\r\n");
}

bool http_connection::end_events() { return write_all("0\r\n\r\n"); }

bool http_connection::client_gone() {
  if (broken_)
    return true;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0)
    return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) {
    broken_ = true;
    return true;
  }
  return false;
}

http_server::http_server(int workers, int timeout_s, size_t max_body_bytes,
                         handler h, bad_request_handler bad)
    : workers_(workers), timeout_s_(timeout_s), max_body_(max_body_bytes),
      handler_(std::move(h)), bad_request_(std::move(bad)) {}

http_server::~http_server() {
  stop();
  for (std::thread &t : threads_)
    if (t.joinable())
      t.join();
  for (auto &[fd, peer] : queue_)
    ::close(fd);
  if (listen_fd_ >= 0)
    ::close(listen_fd_);
}

bool http_server::listen(const std::string &host, int port,
                         std::string *error) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found)) {
    *error = "--host " + host + ": " + gai_strerror(rc);
    return false;
  }
  for (addrinfo *a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
                            a->ai_protocol);
    if (fd < 0)
      continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 512) == 0) {
      listen_fd_ = fd;
      sockaddr_storage bound{};
      socklen_t len = sizeof bound;
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &len);
      port_ = ntohs(bound.ss_family == AF_INET6
                        ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
                        : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
      break;
    }
    *error = host + ":" + service + ": " + std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0 && error->empty())
    *error = host + ":" + service + ": no address to listen on";
  return listen_fd_ >= 0;
}

void http_server::serve() {
  for (int i = 0; i < workers_; ++i)
    threads_.emplace_back([this] { work(); });
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0)
      continue;
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr *>(&from),
                             &len, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char name[INET6_ADDRSTRLEN] = "?";
    if (from.ss_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&from)->sin_addr,
                  name, sizeof name);
    else if (from.ss_family == AF_INET6)
      ::inet_ntop(AF_INET6,
                  &reinterpret_cast<sockaddr_in6 *>(&from)->sin6_addr, name,
                  sizeof name);
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(fd, name);
    cv_.notify_one();
  }
}

void http_server::stop() {
  stopping_ = true;
  cv_.notify_all();
}

void http_server::work() {
  for (;;) {
    std::pair<int, std::string> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    serve_connection(next.first, next.second);
  }
}

void http_server::serve_connection(int fd, const std::string &peer) {
  http_connection c(fd, peer, timeout_s_, max_body_);
  // A kept-alive connection waits this long for its next request (longer
  // than the 5 s clients such as httpx keep an idle connection).
  const int idle_ms = 15000;
  bool first = true;
  while (!stopping_) {
    http_request request;
    int status = 0;
    std::string error;
    const auto got = c.read(&request, first ? -1 : idle_ms, &status, &error);
    first = false;
    if (got == http_connection::read_result::closed)
      return;
    if (got == http_connection::read_result::bad) {
      bad_request_(c, status, error);
      return;
    }
    handler_(c, request);
    if (!c.keep_alive() || c.client_gone())
      return;
  }
}

} // namespace sgc::serve
