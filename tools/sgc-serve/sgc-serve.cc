// sgc-serve: an OpenAI-compatible HTTP server for a compiled model. Listens
// first (so /health says 503 while the model loads), then loads, serves,
// and on SIGTERM or SIGINT drains: running requests finish within
// --drain-timeout, new ones get 503, and it exits 0.
#include "tools/sgc-serve/engine.h"
#include "tools/sgc-serve/http.h"
#include "tools/sgc-serve/metrics.h"
#include "tools/sgc-serve/options.h"
#include "tools/sgc-serve/routes.h"
#include "tools/sgc-serve/served_model.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <thread>
#include <unistd.h>

using namespace sgc::serve;

namespace {

/// Leaves without running destructors: workers may still sit in a kept-
/// alive connection's read, and nothing is left to flush but stdio.
[[noreturn]] void leave(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

} // namespace

int main(int argc, char **argv) {
  options o;
  if (int rc = parse_options(argc, argv, &o); rc >= 0)
    return rc;

  // Signals go to sigwait below, not to whichever thread runs.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  metrics m;
  routes api(o, m);
  // Workers: one per slot and per waiting request, and a few for /health,
  // /metrics and tokenization while every slot is busy.
  http_server server(
      o.parallel + o.max_queue + 4, o.timeout_s, o.max_body_bytes,
      [&](http_connection &c, const http_request &r) { api.handle(c, r); },
      [&](http_connection &c, int status, const std::string &why) {
        api.bad_request(c, status, why);
      });
  std::string error;
  if (!server.listen(o.host, o.port, &error)) {
    std::fprintf(stderr, "sgc-serve: error: %s\n", error.c_str());
    return SGC_STATUS_USAGE;
  }
  std::fprintf(stderr, "sgc-serve: listening on http://%s:%d\n",
               o.host.c_str(), server.port());
  std::thread http([&] { server.serve(); });

  // Tests see /health answer 503 while the model loads.
  if (const char *ms = std::getenv("SGC_SERVE_TEST_LOAD_DELAY_MS"))
    usleep(static_cast<useconds_t>(std::atoi(ms)) * 1000u);
  served_model model;
  if (int rc = model.load(o, &error); rc != 0) {
    std::fprintf(stderr, "sgc-serve: error: %s\n", error.c_str());
    leave(rc);
  }
  engine e(model, m, o.max_queue);
  api.set_ready(&model, &e);
  std::fprintf(stderr,
               "sgc-serve: ready: model '%s', %d sequence slot(s), context "
               "%lld, %d thread(s)\n",
               model.id().c_str(), model.slots(),
               static_cast<long long>(model.context()),
               sgc_session_num_threads(model.session()));

  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "sgc-serve: %s: draining (running requests get %d s)\n",
               sig == SIGTERM ? "SIGTERM" : "SIGINT", o.drain_s);
  api.set_draining();
  e.begin_drain();
  const double deadline = now_seconds() + o.drain_s;
  while (!e.idle() && now_seconds() < deadline)
    usleep(20000);
  if (!e.idle()) {
    std::fprintf(stderr, "sgc-serve: the drain deadline passed: ending the "
                         "requests still running\n");
    e.cancel_all("the server is shutting down");
  }
  // Let the workers write what the last requests produced.
  const double flush_deadline = now_seconds() + 5;
  while (api.in_flight() > 0 && now_seconds() < flush_deadline)
    usleep(10000);
  server.stop();
  std::fprintf(stderr, "sgc-serve: stopped\n");
  leave(0);
}
