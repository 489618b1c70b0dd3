// routes.h - the endpoints: authentication, CORS, readiness, one log line
// per request, and the OpenAI responses (whole or streamed).
#ifndef SGC_TOOLS_SGC_SERVE_ROUTES_H
#define SGC_TOOLS_SGC_SERVE_ROUTES_H

#include "tools/sgc-serve/api_request.h"
#include "tools/sgc-serve/engine.h"
#include "tools/sgc-serve/http.h"
#include "tools/sgc-serve/metrics.h"
#include "tools/sgc-serve/options.h"
#include "tools/sgc-serve/served_model.h"

#include <atomic>

namespace sgc::serve {

class routes {
public:
  routes(const options &o, metrics &m);

  /// The model is loaded: requests are served from now on.
  void set_ready(served_model *model, engine *e);
  /// SIGTERM: /health answers 503 so that load balancers stop sending.
  void set_draining() { draining_ = true; }
  /// HTTP requests being handled now.
  int in_flight() const { return in_flight_; }

  void handle(http_connection &c, const http_request &r);
  void bad_request(http_connection &c, int status, const std::string &why);

private:
  int dispatch(http_connection &c, const http_request &r,
               const http_headers &cors, std::string *note);
  int send_json(http_connection &c, int status, const std::string &body,
                const http_headers &extra);
  int send_error(http_connection &c, const api_error &e,
                 const http_headers &extra);
  int generate(http_connection &c, const http_request &r, bool chat,
               const http_headers &cors, std::string *note);
  int tokenize(http_connection &c, const http_request &r,
               const http_headers &cors);
  int detokenize(http_connection &c, const http_request &r,
                 const http_headers &cors);
  http_headers cors_headers(const http_request &r) const;
  bool authorized(const http_request &r) const;

  const options &options_;
  metrics &metrics_;
  served_model *model_ = nullptr;
  engine *engine_ = nullptr;
  std::atomic<bool> ready_{false}, draining_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<uint64_t> next_id_{1};
  int64_t started_ = 0;
};

} // namespace sgc::serve

#endif // SGC_TOOLS_SGC_SERVE_ROUTES_H
