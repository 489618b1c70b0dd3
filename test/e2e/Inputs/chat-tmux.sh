#!/usr/bin/env bash
# chat-tmux.sh SO WEIGHTS DIR: runs `sgc-run SO --weights WEIGHTS --chat -v` in a detached tmux
# session (a real terminal), types two turns, interrupts the third answer with Ctrl-C, types a
# fourth turn, then Ctrl-D. Leaves in DIR: err.log (sgc-run's stderr), pane.txt (the screen),
# exit (sgc-run's exit status). Tokens are paced (SGC_RUN_TEST_TOKEN_DELAY_MS) so that the
# Ctrl-C lands in the middle of an answer.
set -euo pipefail
so=$1 weights=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
sock="$dir/tmux.sock"
t() { tmux -S "$sock" "$@"; }
# The wrapper handles SIGINT itself (a handler, not SIG_IGN, so sgc-run gets the default back)
# and survives the Ctrl-C to record sgc-run's status.
cat > "$dir/run.sh" <<EOS
#!/usr/bin/env bash
trap ':' INT
SGC_RUN_TEST_TOKEN_DELAY_MS=20 sgc-run '$so' --weights '$weights' --chat --max-new-tokens 60 -v 2> '$dir/err.log'
echo \$? > '$dir/exit'
sleep 5
EOS
chmod +x "$dir/run.sh"
t new-session -d -s chat -x 160 -y 50 "$dir/run.sh"
trap 't kill-server 2>/dev/null || true' EXIT

# Waits until err.log has |2| lines matching |1| (at most 20 s).
wait_for() {
  local i
  for i in $(seq 200); do
    if [ -f "$dir/err.log" ] && [ "$(grep -c -- "$1" "$dir/err.log" || true)" -ge "$2" ]; then
      return 0
    fi
    sleep 0.1
  done
  echo "timed out waiting for $2 x '$1'" >&2
  return 1
}
# Waits until the screen shows an empty prompt line (at most 20 s): keys typed
# before sgc-run draws its prompt would be echoed ahead of it (seen under the
# sanitizer build, where the prompt comes late).
wait_prompt() {
  local i
  for i in $(seq 200); do
    t capture-pane -p -t chat | grep -q '^> *$' && return 0
    sleep 0.1
  done
  echo "timed out waiting for the prompt" >&2
  return 1
}
wait_for '^chat format' 1
wait_prompt
t send-keys -t chat 'Hello' Enter
wait_for '^answer ids' 1
wait_prompt
t send-keys -t chat 'How are you?' Enter
wait_for '^answer ids' 2
wait_prompt
t send-keys -t chat 'Tell me more' Enter
wait_for '^prefill:' 3
sleep 0.3
t send-keys -t chat C-c
wait_for '^answer ids' 3
wait_prompt
t send-keys -t chat 'Bye' Enter
wait_for '^answer ids' 4
t send-keys -t chat C-d
for i in $(seq 100); do [ -f "$dir/exit" ] && break; sleep 0.1; done
t capture-pane -p -t chat > "$dir/pane.txt"
