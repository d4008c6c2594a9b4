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

# wait_line FILE TEXT: wait until FILE holds TEXT (a tracer saying it is
# attached); exits the script after 20 s.
wait_line() {
	_i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1)); [ $_i -lt 400 ] || { echo "$(basename "$0"): tracer did not start" >&2; exit 1; }
		sleep 0.05
	done
}

# cs_start DIR [ARGS...]: cachescoped in the background with CSV on, its
# output in DIR/cs.out; returns once it is attached (cs: its pid).
# cs_stop: SIGINT, as an operator stops it, and its summary is written.
cs_start() {
	_d=$1
	shift
	"$B/cachescoped" --socket "$_d/cs.sock" --top 0 --csv "$_d/cs.csv" "$@" > "$_d/cs.out" 2>&1 &
	cs=$!
	cs_wait "$_d/cs.sock" $cs
}
cs_stop() { kill -INT $cs; wait $cs; }

# redis_start DIR PORT: redis-server with no persistence on
# 127.0.0.1:PORT, its files under DIR; returns once it answers (rds: its
# pid).  redis_rps PORT N: redis-benchmark's SET then GET, N each, 50
# clients; their requests/s together (2N over the time of both).
redis_start() {
	(cd "$1" && exec redis-server --port "$2" --bind 127.0.0.1 --save "" --appendonly no \
		--dir "$1" --logfile "$1/redis.log") &
	rds=$!
	_i=0
	until redis-cli -p "$2" ping 2>/dev/null | grep -q PONG; do
		_i=$((_i + 1))
		[ $_i -lt 50 ] || { echo "$(basename "$0"): redis-server did not answer" >&2; exit 1; }
		sleep 0.1
	done
}
redis_rps() {
	redis-benchmark -p "$1" -c 50 -n "$2" -t set,get --csv |
		awk -F'"' '$2 == "SET" || $2 == "GET" {t += 1 / $4; n++} END {if (n == 2) printf "%.0f\n", 2 / t}'
}

# nginx_start DIR PORT: nginx, 2 workers, a static page on 127.0.0.1:PORT,
# files under DIR; returns once it answers (ngx: its pid).
nginx_start() {
	mkdir -p "$1/www"
	echo "cachescope bench" > "$1/www/index.html"
	cat > "$1/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $1/nginx.pid;
error_log $1/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $1/body; proxy_temp_path $1/proxy;
	fastcgi_temp_path $1/fcgi; uwsgi_temp_path $1/uwsgi; scgi_temp_path $1/scgi;
	server { listen 127.0.0.1:$2; root $1/www; }
}
CONF
	nginx -c "$1/nginx.conf" -p "$1" &
	ngx=$!
	_i=0
	until wrk -t1 -c1 -d1s "http://127.0.0.1:$2/" >/dev/null 2>&1; do
		_i=$((_i + 1)); [ $_i -lt 50 ] || { echo "$(basename "$0"): nginx did not answer" >&2; exit 1; }
		sleep 0.1
	done
}

# floor_start DIR [--frees] / floor_stop: bench/floor's empty programs on
# the four slab tracepoints, the dispatch floor no tracer of them goes
# below (--frees: on the two free tracepoints alone, the floor of a tracer
# that sees every free).
floor_start() {
	_fd=$1; shift
	"$B/bench/floor" "$@" > "$_fd/floor.out" 2>&1 &
	fl=$!
	wait_line "$_fd/floor.out" ready
}
floor_stop() { kill -INT $fl; wait $fl || true; }

# tracer_rounds ROUNDS DIR MEASURE: ROUNDS rounds of the set-ups one after
# the other, so that this VM's drift hits all alike: MEASURE (a command
# printing one number) untraced, under cachescoped (CSV
# on), under cachescoped --sample-time 4 (sampling in time), under
# cachescoped --sample-time 4 --sample-time-frees (the frees too), under
# cachescoped --sample 1 (every object tracked), under the empty programs
# of bench/floor, under its empty free programs alone (the most that
# sampling the allocations in time can reach while every free is seen),
# and where bpftrace is installed under the counting peer
# and the same-job peer; the numbers go to DIR/none, cs, intime, frees, exact,
# floor, ffloor, count, samejob (and the default cachescoped's last output to
# DIR/cs.default.out).  Each round starts one set-up later than the
# round before: a server's throughput here drifts within a round too, and
# a fixed order charges that drift to whoever comes late.  Give as many
# rounds as set-ups (9) to put each in every place once.
tracer_rounds() {
	_order="none cs intime frees exact floor ffloor count samejob"
	for _r in $(seq "$1"); do
		for _s in $_order; do
			tracer_one "$_s" "$2" "$3"
		done
		_order="${_order#* } ${_order%% *}"
	done
}

# tracer_have SETUP: whether the set-up's tracer is here (bench/floor
# built, bpftrace installed).  tracer_start SETUP DIR: start it (none:
# nothing), its pid in _tp; tracer_stop SETUP: stop it.
tracer_have() {
	case $1 in
	floor|ffloor) [ -x "$B/bench/floor" ] ;;
	count|samejob) command -v bpftrace >/dev/null 2>&1 ;;
	*)	true ;;
	esac
}
tracer_start() {
	_tp=
	case $1 in
	none)	;;
	cs)	cs_start "$2"; _tp=$cs ;;
	exact)	cs_start "$2" --sample 1; _tp=$cs ;;
	intime)	cs_start "$2" --sample-time 4; _tp=$cs ;;
	frees)	cs_start "$2" --sample-time 4 --sample-time-frees; _tp=$cs ;;
	floor)	floor_start "$2"; _tp=$fl ;;
	ffloor)	floor_start "$2" --frees; _tp=$fl ;;
	count|samejob)
		rm -f "$2/bt.out"
		BPFTRACE_MAP_KEYS_MAX=262144 bpftrace "bench/peers/$1.bt" > "$2/bt.out" 2>&1 &
		_tp=$!
		wait_line "$2/bt.out" ready ;;
	esac
}
tracer_stop() {
	case $1 in
	none)	;;
	floor|ffloor) floor_stop ;;
	count|samejob) stop_peer "$_tp" ;;
	*)	cs_stop ;;
	esac
}

# tracer_one SETUP DIR MEASURE: one set-up of tracer_rounds, measured
# once.  A tracer's exit leaves work behind (its maps are freed by a
# kernel worker after a grace period: bpftrace's hash maps took the
# eventfd loop after it from 570 to 1 200 ns an iteration), and the
# rotation keeps each set-up behind the same one every round: so a second
# of quiet after each (two after bpftrace).
tracer_one() {
	tracer_have "$1" || return 0
	tracer_start "$1" "$2"
	$3 >> "$2/$1"
	tracer_stop "$1"
	[ "$1" != cs ] || cp "$2/cs.out" "$2/cs.default.out"
	case $1 in none) ;; count|samejob) sleep 2 ;; *) sleep 1 ;; esac
}

# tracer_table DIR UNIT: tracer_rounds' medians, each with its ratio to
# the untraced median.
tracer_table() {
	_base=$(median < "$1/none")
	printf '  %-22s %10.0f %s\n' "untraced" "$_base" "$2"
	for _s in "cs:cachescoped (csv)" "intime:  alloc 1/4 of time" "frees:  and frees too" "exact:  every object" "floor:empty programs" \
		"ffloor:  free programs only" "count:bpftrace counting" "samejob:bpftrace same job"; do
		[ -s "$1/${_s%%:*}" ] || continue
		_m=$(median < "$1/${_s%%:*}")
		printf '  %-22s %10.0f %s  %.2fx untraced\n' "${_s#*:}" "$_m" "$2" \
			"$(awk "BEGIN{print $_m / $_base}")"
	done
	printf '  rounds, in order (each round starts one set-up later):'
	for _s in none cs intime frees exact floor ffloor count samejob; do
		[ -s "$1/$_s" ] && printf ' %s %s;' "$_s" "$(tr '\n' ' ' < "$1/$_s" | sed 's/ $//')"
	done
	echo
}

# tracer_cost DIR SECONDS LOAD: what the tracers cost under a load by the
# kernel's own accounting, which a throughput ratio on this VM (rounds
# 20-40 % apart) cannot resolve to a point.  kernel.bpf_stats_enabled is
# switched on for it and back after.  For the empty programs, cachescoped
# (by default, --sample-time 4, with the frees too) and bpftrace
# counting, one after the other: the tracer started, LOAD (a command that
# starts the load in the background, its pid in $ld, for SECONDS + 4 s at
# least), 2 s to settle, then SECONDS measured: every BPF program's runs
# and run time on the host (only the tracer's are attached; systemd's run
# a few times a minute) and the tracer process's CPU.  A line "SETUP RUNS
# RUN_NS PROCESS_TICKS" each to DIR/cost; cost_table prints them.
bpf_runs() {
	bpftool prog show 2>/dev/null | awk '/^[0-9]+:/ {
		t = c = 0
		for (i = 1; i < NF; i++) {
			if ($i == "run_time_ns") t = $(i + 1)
			if ($i == "run_cnt") c = $(i + 1)
		}
		if (c) print $1, t, c
	}'
}
proc_ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat" 2>/dev/null || echo 0; }
tracer_cost() {
	command -v bpftool >/dev/null 2>&1 || return 0
	stats_on
	: > "$1/cost"
	for _s in floor cs intime frees count; do
		tracer_have "$_s" || continue
		tracer_start "$_s" "$1"
		$3
		sleep 2
		bpf_runs > "$1/runs0"; _c0=$(proc_ticks "$_tp")
		sleep "$2"
		bpf_runs > "$1/runs1"; _c1=$(proc_ticks "$_tp")
		kill "$ld" 2>/dev/null || true
		wait "$ld" 2>/dev/null || true
		tracer_stop "$_s"
		awk -v s="$_s" -v c=$((_c1 - _c0)) '
			NR == FNR { t[$1] = $2; n[$1] = $3; next }
			{ T += $2 - t[$1]; N += $3 - n[$1] }
			END { printf "%s %.0f %.0f %d\n", s, N, T, s == "floor" ? 0 : c }
		' "$1/runs0" "$1/runs1" >> "$1/cost"
		sleep 1
	done
	cost_restore
}
# stats_on: the kernel's accounting of every program's runs on, as it was
# kept for cost_restore: bpf_stats_enabled as stats_on found it (for a
# trap too).
stats_on() {
	_st0=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
}
cost_restore() {
	[ -z "${_st0:-}" ] || echo "$_st0" > /proc/sys/kernel/bpf_stats_enabled
	_st0=
}
# cost_table DIR SECONDS: tracer_cost's lines: the programs' runs a
# second (sampling in time runs fewer) against the empty programs', their
# run time, the part of it above an empty run's (the empty program's mean
# taken off each run: the accounting's own clock reads and the part of
# the dispatch it sees are in every run alike), the tracer process's CPU,
# and the run time and the process's CPU together, in % of one CPU.  What
# no accounting sees: the dispatch outside the run, and the IPIs of an
# attach on the other CPUs.
cost_table() {
	[ -s "$1/cost" ] || return 0
	echo "  under the same load, by the kernel's accounting (bpf_stats), $2 s each, % of one CPU:"
	awk -v T="$2" -v hz="$(getconf CLK_TCK)" '
		$1 == "floor" && $2 > 0 { e = $3 / $2; r = $2 }
		{ s[NR] = $1; n[NR] = $2; t[NR] = $3; c[NR] = $4 }
		END {
			if (r) printf "  (an empty run: %.0f ns)\n", e
			for (i = 1; i <= NR; i++) {
				m = "bpftrace counting"
				if (s[i] == "floor") m = "empty programs"
				if (s[i] == "cs") m = "cachescoped (csv)"
				if (s[i] == "intime") m = "  alloc 1/4 of time"
				if (s[i] == "frees") m = "  and frees too"
				a = t[i] / T / 1e7
				p = c[i] / hz / T * 100
				printf "  %-22s runs %4.0fk/s", m, n[i] / T / 1000
				if (r) printf " %4.2fx", n[i] / r
				printf "  run time %5.1f", a
				if (r) printf " (above empty runs %5.1f)", (t[i] - n[i] * e) / T / 1e7
				printf "  process %4.1f  in all %5.1f\n", p, a + p
			}
		}' "$1/cost"
}
