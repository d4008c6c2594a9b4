# Shared by the bench scripts (sourced; they set B, the build folder).

# The median of the numbers on stdin, one a line.
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# cs_wait SOCKET PID: wait until cachescoped (PID) answers on SOCKET, which
# it makes once every program and probe is attached; exits the script when
# it died or took over 20 s.
cs_wait() {
	_i=0
	until "$B/cachescope" --socket "$1" stats >/dev/null 2>&1; do
		kill -0 "$2" 2>/dev/null || { echo "$(basename "$0"): cachescoped did not start" >&2; exit 1; }
		_i=$((_i + 1)); [ $_i -lt 400 ] || { echo "$(basename "$0"): cachescoped did not start" >&2; exit 1; }
		sleep 0.05
	done
}

# stop_peer PID: stop a bpftrace peer with SIGINT (it prints its maps and
# exits), again every 5 s if it is still there (one INT was once lost and
# the run waited half an hour), SIGKILL after 30 s; then reap it.
stop_peer() {
	_i=0
	kill -INT "$1" 2>/dev/null
	while kill -0 "$1" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -ge 300 ]; then
			echo "$(basename "$0"): peer $1 ignored SIGINT for 30 s: killed" >&2
			kill -KILL "$1" 2>/dev/null
			break
		fi
		[ $((_i % 50)) -ne 0 ] || kill -INT "$1" 2>/dev/null
		sleep 0.1
	done
	wait "$1" 2>/dev/null || true
}
