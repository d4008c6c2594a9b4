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
