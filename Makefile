# cachescope build.  One output folder (build/), V=1 for the full commands.
#
#   make          the programs: cachescoped, cachescope, kvref, and where the
#                 CUDA toolkit is, libcachescope_cupti.so and kvref_cuda.so
#   make tests    the test, helper and benchmark binaries as well
#   make deps     install the Debian packages building and running need
#                 (as root; tools/deps.sh build)
#   make test     deps and the tests' own packages (tools/deps.sh build test),
#                 build, then every test, and the unit tests again under
#                 ASan+UBSan (built into build-asan/)
#   make unit-asan  only the unit tests under ASan+UBSan
#   make fuzz     build the libFuzzer harnesses of tests/fuzz/ into build-fuzz/
#                 and run each FUZZ_TIME seconds (default 60) on its seeds
#   make run      deps, the programs, then the demo (BACKEND=cuda: kvref on
#                 the GPU)
#   make gpu-bundle  build/cachescope-gpu.tar.gz: the programs, libraries
#                 and tests/gpu/device-check.sh for a bare GPU machine
#   make vmlinux  regenerate vmlinux/<arch>/vmlinux.h from this kernel's BTF
#   make install  the daemon, CLI, kvref, libraries, man pages, systemd unit
#                 and Grafana dashboard under $(DESTDIR)$(PREFIX) (default
#                 /usr/local; BINDIR, SBINDIR, LIBDIR, PKGLIBDIR, MANDIR,
#                 UNITDIR, DATADIR override the parts); make uninstall

OUTPUT := build
CLANG ?= clang
BPFTOOL ?= $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
CC ?= cc

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/s390x/s390/' -e 's/riscv64/riscv/')
VMLINUX := vmlinux/$(ARCH)/vmlinux.h

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS ?= -g -O2
# json-c: the JSON answers of the control socket and the CLI
JSONC_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSONC_LIBS := $(or $(shell pkg-config --libs json-c 2>/dev/null),-ljson-c)
CS_CFLAGS := $(CFLAGS) -std=gnu11 -Wall -Wextra -Werror -MMD -MP \
	-I$(OUTPUT) -Ibpf -D_GNU_SOURCE $(JSONC_CFLAGS)
LDLIBS := -lbpf -ldw -lelf -lz -lm -lcap -lmicrohttpd -lyaml -lcrypt $(JSONC_LIBS)
# the system include dirs clang would search for the host, so that libbpf's
# usdt.bpf.h finds <asm/errno.h> (as libbpf-bootstrap does)
CLANG_BPF_SYS_INCLUDES = $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS = -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(dir $(VMLINUX)) \
	-Ibpf $(CLANG_BPF_SYS_INCLUDES) -Wall -Werror -MMD -MP

DAEMON_SRCS := $(wildcard daemon/*.c)
DAEMON_OBJS := $(DAEMON_SRCS:%.c=$(OUTPUT)/%.o)
# The core: the modules that turn records or CSV rows into windows, rows,
# features, labels, clusters and their outputs, with no BPF, no privileges
# and no log.  One archive linked by the daemon, the CLI (its offline
# verbs), the tests and the benchmarks alike: the linker takes what each uses.
CORE_MODS := event window history htab stats topk kvpool gpu usdt features classify analysis anomaly change psi report csv csvread \
	csvschema rowcsv rows strutil kstate cgroup budget duty
CORE_OBJS := $(CORE_MODS:%=$(OUTPUT)/daemon/%.o) $(OUTPUT)/cluster/dbscan.o
CORE_LIB := $(OUTPUT)/libcscore.a
# the window table, as the fuzzers compile it from source
WINDOW_SRCS := daemon/window.c daemon/history.c daemon/htab.c daemon/kvpool.c daemon/gpu.c daemon/usdt.c daemon/stats.c daemon/topk.c

UNIT_TESTS := args csv event window htab counters kstate dbscan features classify analysis kvref sample strutil control privs \
	metrics httpd webconfig csvread offline report rows cli status paths cgroup ptree rowcsv summary spawn tpproto \
	keeper workload anomaly psi change stacks pyoffsets budget duty
UNIT_BINS := $(UNIT_TESTS:%=$(OUTPUT)/tests/test_%)
# tests/run.sh runs these (a test binary built but not run is no test)
export CS_UNITS := $(UNIT_TESTS)
HELPERS := fdchurn refault pingpong leaker tcploop
HELPER_BINS := $(HELPERS:%=$(OUTPUT)/tests/helpers/%)
INTEG_BINS := $(OUTPUT)/tests/test_integration $(OUTPUT)/tests/test_labels \
	$(OUTPUT)/tests/test_hardening $(OUTPUT)/tests/test_prometheus $(OUTPUT)/tests/test_plot \
	$(OUTPUT)/tests/test_cli_live $(OUTPUT)/tests/test_install $(OUTPUT)/tests/test_scope \
	$(OUTPUT)/tests/test_adversary $(OUTPUT)/tests/test_fleet

KVREF_OBJS := $(addprefix $(OUTPUT)/tools/kvref/,kvref.o workload.o model.o kvcache.o) \
	$(OUTPUT)/daemon/strutil.o
BINS := $(OUTPUT)/cachescoped $(OUTPUT)/cachescope $(OUTPUT)/kvref
BENCH_BINS := $(OUTPUT)/bench/slabload $(OUTPUT)/bench/keyload $(OUTPUT)/bench/dbscan $(OUTPUT)/bench/nearest \
	$(OUTPUT)/bench/floor
ALL_OBJS := $(DAEMON_OBJS) $(OUTPUT)/tools/cachescope.o $(OUTPUT)/tools/cli.o $(OUTPUT)/tools/offline.o \
	$(OUTPUT)/tools/svg.o $(OUTPUT)/tools/pca.o \
	$(UNIT_TESTS:%=$(OUTPUT)/tests/test_%.o) $(OUTPUT)/tests/test_integration.o \
	$(OUTPUT)/tests/test_labels.o $(OUTPUT)/tests/test_hardening.o $(OUTPUT)/tests/test_prometheus.o \
	$(OUTPUT)/tests/test_plot.o $(OUTPUT)/tests/test_cli_live.o $(OUTPUT)/tests/test_install.o \
	$(OUTPUT)/tests/test_scope.o $(OUTPUT)/tests/test_adversary.o $(OUTPUT)/tests/test_fleet.o \
	$(OUTPUT)/tests/helpers/harness.o \
	$(HELPERS:%=$(OUTPUT)/tests/helpers/%.o) $(BENCH_BINS:%=%.o) \
	$(OUTPUT)/cluster/dbscan.o $(KVREF_OBJS)

# The CUPTI subscriber is built where the CUDA toolkit with CUPTI exists.
CUDA ?= /usr/local/cuda
CUPTI_LIBDIR := $(CUDA)/lib64
HAVE_CUPTI := $(wildcard $(CUDA)/include/cupti.h)
CUPTI_CFLAGS = $(filter-out -MMD -MP,$(CS_CFLAGS)) -I$(CUDA)/include
CUPTI_WRAPS := cuptiSubscribe_v2 cuptiUnsubscribe cuptiEnableCallback cuptiActivityRegisterCallbacks \
	cuptiActivityEnable cuptiActivityDisable cuptiActivityFlushAll \
	cuptiActivityGetNumDroppedRecords cuptiActivityRegisterTimestampCallback dlopen \
	probe_batch
# The CUDA backend of kvref (kvref_cuda.so) is built where nvcc exists: A100
# (sm_80) and H100/H200 (sm_90) code, and sm_90 PTX for newer GPUs to JIT.
NVCC ?= $(CUDA)/bin/nvcc
HAVE_NVCC := $(wildcard $(NVCC))
NVCC_FLAGS := -O2 -std=c++17 -gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
	-Werror all-warnings -Xcompiler -fPIC,-fvisibility=hidden,-Wall,-Wextra,-Werror
ifneq ($(HAVE_NVCC),)
CUDA_BINS := $(OUTPUT)/kvref_cuda.so
CUDA_TEST_BINS := $(OUTPUT)/tests/gpu/knownwork
endif
# the GPU device check's bundle (make gpu-bundle): its programs find their
# shared libraries in lib/ beside them first, the libraries' own too (RPATH)
BUNDLE_RPATH := -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/lib'
ifneq ($(HAVE_CUPTI),)
CUPTI_BINS := $(OUTPUT)/libcachescope_cupti.so $(OUTPUT)/tests/helpers/nodriver \
	$(OUTPUT)/tests/helpers/libcupti.so.12 \
	$(OUTPUT)/tests/test_cupti $(OUTPUT)/tests/helpers/gpufeed $(OUTPUT)/bench/cupti_record \
	$(OUTPUT)/bench/gpu_rate
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all tests deps test-deps test unit unit-bins unit-asan fuzz fuzz-bins integration run gpu-bundle \
	vmlinux clean check-arch install uninstall FORCE

# what an operator builds, installs and runs: nothing here needs cmocka
PROGS := $(BINS) $(filter %.so,$(CUPTI_BINS)) $(CUDA_BINS)

all: $(PROGS)

tests: $(PROGS) $(UNIT_BINS) $(OUTPUT)/tests/test_kvref_kernels $(OUTPUT)/tests/kvref_cuda_emu.so \
	$(OUTPUT)/tests/gpu/knownwork_emu $(OUTPUT)/tests/gpu/gpumem_emu $(CUDA_TEST_BINS) \
	$(OUTPUT)/tests/helpers/leakclose.so \
	$(INTEG_BINS) $(HELPER_BINS) $(BENCH_BINS) $(CUPTI_BINS)

check-arch:
	@test -f $(VMLINUX) || { echo "cachescope: no $(VMLINUX) for $$(uname -m); run 'make vmlinux' on a kernel with BTF" >&2; exit 1; }

deps:
	$(Q)./tools/deps.sh build

test-deps:
	$(Q)./tools/deps.sh build test

vmlinux:
	$(call msg,GEN,$(VMLINUX))
	$(Q)mkdir -p $(dir $(VMLINUX))
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX).tmp
	$(Q)mv $(VMLINUX).tmp $(VMLINUX)

# ---- BPF ----

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c | check-arch
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# the loader includes the skeleton
$(OUTPUT)/daemon/loader.o: $(OUTPUT)/cachescope.skel.h

# ---- installed layout ----
# cachescoped finds kvref and the CUPTI library beside itself (this build
# folder) or in PKGLIBDIR, compiled in relative to SBINDIR (daemon/paths.c):
# an installed tree then works at its PREFIX and under a DESTDIR alike.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
PKGLIBDIR ?= $(LIBDIR)/cachescope
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
# systemd reads units from /usr/local/lib/systemd/system as well as /usr/lib/...
UNITDIR ?= $(PREFIX)/lib/systemd/system
# the service's options (EnvironmentFile=): Debian's place, whatever PREFIX
DEFAULTDIR ?= /etc/default
PKGLIBDIR_REL := $(shell realpath -m --relative-to='$(SBINDIR)' '$(PKGLIBDIR)')

# rewritten only when the directories change, so paths.o is rebuilt then
$(OUTPUT)/cs_dirs.h: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '#define CS_PKGLIBDIR_REL "%s"\n' '$(PKGLIBDIR_REL)' > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(OUTPUT)/daemon/paths.o: $(OUTPUT)/cs_dirs.h

# ---- userspace ----

$(OUTPUT)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CS_CFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(OUTPUT)/cachescoped: $(filter-out $(CORE_OBJS),$(DAEMON_OBJS)) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# -rdynamic: kvref_cuda.so calls back into kvref's cache (kv_seq_reserve...)
$(OUTPUT)/kvref: $(KVREF_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -rdynamic $^ -lm -lpthread -ldl -o $@

# the CLI escapes what it prints with the daemon's helper; its offline verbs
# (cluster, plot) run the daemon's features, rules and DBSCAN over CSV
OFFLINE_OBJS := $(OUTPUT)/tools/offline.o $(OUTPUT)/tools/svg.o $(OUTPUT)/tools/pca.o $(OUTPUT)/tools/cli.o $(CORE_LIB)
$(OUTPUT)/cachescope: $(OUTPUT)/tools/cachescope.o $(OFFLINE_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(JSONC_LIBS) -lm -o $@

# ---- tests: one binary per module, linked with it (or, for the core's
# modules, the core library, of which the linker takes what the test uses) ----

$(OUTPUT)/tests/test_args: $(OUTPUT)/tests/test_args.o $(OUTPUT)/daemon/args.o \
	$(OUTPUT)/daemon/metrics.o $(CORE_LIB)
$(OUTPUT)/tests/test_metrics: $(OUTPUT)/tests/test_metrics.o $(OUTPUT)/daemon/metrics.o
$(OUTPUT)/tests/test_status: $(OUTPUT)/tests/test_status.o $(OUTPUT)/daemon/status.o $(CORE_LIB)
$(OUTPUT)/tests/test_paths: $(OUTPUT)/tests/test_paths.o $(OUTPUT)/daemon/paths.o
$(OUTPUT)/tests/test_httpd: $(OUTPUT)/tests/test_httpd.o $(OUTPUT)/daemon/httpd.o $(OUTPUT)/daemon/loop.o \
	$(OUTPUT)/daemon/webconfig.o $(OUTPUT)/daemon/strutil.o
$(OUTPUT)/tests/test_httpd: TEST_LDLIBS := -lmicrohttpd -lyaml -lcrypt
$(OUTPUT)/tests/test_webconfig: $(OUTPUT)/tests/test_webconfig.o $(OUTPUT)/daemon/webconfig.o \
	$(OUTPUT)/daemon/strutil.o
$(OUTPUT)/tests/test_webconfig: TEST_LDLIBS := -lyaml -lcrypt
$(OUTPUT)/tests/test_csv: $(OUTPUT)/tests/test_csv.o $(CORE_LIB)
$(OUTPUT)/tests/test_csvread: $(OUTPUT)/tests/test_csvread.o $(CORE_LIB)
$(OUTPUT)/tests/test_offline: $(OUTPUT)/tests/test_offline.o $(OFFLINE_OBJS)
$(OUTPUT)/tests/test_offline: TEST_LDLIBS := $(JSONC_LIBS) -lm
$(OUTPUT)/tests/test_strutil: $(OUTPUT)/tests/test_strutil.o $(CORE_LIB)
$(OUTPUT)/tests/test_report: $(OUTPUT)/tests/test_report.o $(CORE_LIB)
$(OUTPUT)/tests/test_report: TEST_LDLIBS := $(JSONC_LIBS)
$(OUTPUT)/tests/test_rows: $(OUTPUT)/tests/test_rows.o $(CORE_LIB)
$(OUTPUT)/tests/test_rows: TEST_LDLIBS := -lz
$(OUTPUT)/tests/test_rowcsv: $(OUTPUT)/tests/test_rowcsv.o $(CORE_LIB)
$(OUTPUT)/tests/test_rowcsv: TEST_LDLIBS := -lz
$(OUTPUT)/tests/test_summary: $(OUTPUT)/tests/test_summary.o $(OUTPUT)/daemon/summary.o \
	$(OUTPUT)/daemon/log.o $(CORE_LIB)
$(OUTPUT)/tests/test_summary: TEST_LDLIBS := $(JSONC_LIBS)
$(OUTPUT)/tests/test_stacks: $(OUTPUT)/tests/test_stacks.o $(OUTPUT)/daemon/stacks.o $(CORE_LIB)
$(OUTPUT)/tests/test_stacks: TEST_LDLIBS := -ldw -lelf -lz
# CPython 3.11's own headers (python3.11-dev), for the layout the BPF
# programs read of a Python process
$(OUTPUT)/tests/test_pyoffsets: $(OUTPUT)/tests/test_pyoffsets.o
$(OUTPUT)/tests/test_pyoffsets.o: CS_CFLAGS += -I/usr/include/python3.11 -Wno-unused-parameter \
	-Wno-missing-field-initializers
$(OUTPUT)/tests/test_cli: $(OUTPUT)/tests/test_cli.o $(OUTPUT)/tools/cli.o $(CORE_LIB)
$(OUTPUT)/tests/test_cli: TEST_LDLIBS := $(JSONC_LIBS)
$(OUTPUT)/tests/test_cgroup: $(OUTPUT)/tests/test_cgroup.o $(CORE_LIB)
$(OUTPUT)/tests/test_ptree: $(OUTPUT)/tests/test_ptree.o $(OUTPUT)/daemon/ptree.o
$(OUTPUT)/tests/test_event: $(OUTPUT)/tests/test_event.o $(CORE_LIB)
$(OUTPUT)/tests/test_control: $(OUTPUT)/tests/test_control.o $(OUTPUT)/daemon/control.o \
	$(OUTPUT)/daemon/loop.o
$(OUTPUT)/tests/test_privs: $(OUTPUT)/tests/test_privs.o $(OUTPUT)/daemon/privs.o
$(OUTPUT)/tests/test_keeper: $(OUTPUT)/tests/test_keeper.o $(OUTPUT)/daemon/keeper.o \
	$(OUTPUT)/daemon/privs.o $(OUTPUT)/daemon/control.o $(OUTPUT)/daemon/loop.o $(CORE_LIB)
$(OUTPUT)/tests/test_tpproto: $(OUTPUT)/tests/test_tpproto.o $(OUTPUT)/daemon/tpproto.o
$(OUTPUT)/tests/test_anomaly: $(OUTPUT)/tests/test_anomaly.o $(CORE_LIB)
$(OUTPUT)/tests/test_psi: $(OUTPUT)/tests/test_psi.o $(CORE_LIB)
$(OUTPUT)/tests/test_change: $(OUTPUT)/tests/test_change.o $(CORE_LIB)
$(OUTPUT)/tests/test_workload: $(OUTPUT)/tests/test_workload.o $(OUTPUT)/daemon/workload.o \
	$(OUTPUT)/daemon/spawn.o $(OUTPUT)/daemon/privs.o $(CORE_LIB)
$(OUTPUT)/tests/test_workload: TEST_LDLIBS := -lcap
$(OUTPUT)/tests/test_spawn: $(OUTPUT)/tests/test_spawn.o $(OUTPUT)/daemon/spawn.o $(OUTPUT)/daemon/privs.o
$(OUTPUT)/tests/test_window: $(OUTPUT)/tests/test_window.o $(CORE_LIB)
$(OUTPUT)/tests/test_htab: $(OUTPUT)/tests/test_htab.o $(CORE_LIB)
$(OUTPUT)/tests/test_counters: $(OUTPUT)/tests/test_counters.o $(OUTPUT)/daemon/counters.o \
	$(OUTPUT)/daemon/metrics.o $(CORE_LIB)
$(OUTPUT)/tests/test_counters: TEST_LDLIBS := $(JSONC_LIBS)
$(OUTPUT)/tests/test_dbscan: $(OUTPUT)/tests/test_dbscan.o $(CORE_LIB)
$(OUTPUT)/tests/test_features: $(OUTPUT)/tests/test_features.o $(CORE_LIB)
$(OUTPUT)/tests/test_classify: $(OUTPUT)/tests/test_classify.o $(CORE_LIB)
$(OUTPUT)/tests/test_analysis: $(OUTPUT)/tests/test_analysis.o $(CORE_LIB)
$(OUTPUT)/tests/test_kvref: $(OUTPUT)/tests/test_kvref.o $(OUTPUT)/tools/kvref/model.o \
	$(OUTPUT)/tools/kvref/kvcache.o
$(OUTPUT)/tests/test_integration: $(OUTPUT)/tests/test_integration.o $(OUTPUT)/tests/helpers/harness.o
$(OUTPUT)/tests/test_labels: $(OUTPUT)/tests/test_labels.o $(OUTPUT)/tests/helpers/harness.o
$(OUTPUT)/tests/test_sample: $(OUTPUT)/tests/test_sample.o $(OUTPUT)/daemon/sample.o
$(OUTPUT)/tests/test_budget: $(OUTPUT)/tests/test_budget.o $(CORE_LIB)
$(OUTPUT)/tests/test_duty: $(OUTPUT)/tests/test_duty.o $(CORE_LIB)
$(OUTPUT)/tests/test_hardening: $(OUTPUT)/tests/test_hardening.o $(OUTPUT)/tests/helpers/harness.o
$(OUTPUT)/tests/test_prometheus: $(OUTPUT)/tests/test_prometheus.o $(OUTPUT)/tests/helpers/harness.o
$(OUTPUT)/tests/test_prometheus: TEST_LDLIBS := -lcrypt
$(OUTPUT)/tests/test_scope: $(OUTPUT)/tests/test_scope.o $(OUTPUT)/tests/helpers/harness.o
$(OUTPUT)/tests/test_adversary: $(OUTPUT)/tests/test_adversary.o $(OUTPUT)/tests/helpers/harness.o
$(OUTPUT)/tests/test_fleet: $(OUTPUT)/tests/test_fleet.o $(OUTPUT)/tests/helpers/harness.o
# cachescope plot rendered by headless Chromium (no BPF)
$(OUTPUT)/tests/test_plot: $(OUTPUT)/tests/test_plot.o
$(OUTPUT)/tests/test_cli_live: $(OUTPUT)/tests/test_cli_live.o $(OUTPUT)/tests/helpers/harness.o
$(OUTPUT)/tests/test_install: $(OUTPUT)/tests/test_install.o $(OUTPUT)/tests/helpers/harness.o
$(OUTPUT)/tests/test_kstate: $(OUTPUT)/tests/test_kstate.o $(CORE_LIB)
$(OUTPUT)/tests/test_kstate: TEST_LDLIBS := -lz

# the CUDA backend's kernels, run on the host by tests/helpers/cuda_emu.h:
# no CUDA needed
$(OUTPUT)/tests/test_kvref_kernels: tests/test_kvref_kernels.cc tests/helpers/cuda_emu.h \
		cuda/kvref_kernels.cuh $(OUTPUT)/tools/kvref/model.o $(OUTPUT)/tools/kvref/kvcache.o
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(CFLAGS) -std=c++20 -Wall -Wextra -Werror -Itests -pthread $< \
		$(OUTPUT)/tools/kvref/model.o $(OUTPUT)/tools/kvref/kvcache.o -lcmocka -lm -o $@

# a full disk cannot be had without root: the CSV test wraps write(2)
$(OUTPUT)/tests/test_csv: TEST_LDFLAGS := -Wl,--wrap=write

$(UNIT_BINS) $(INTEG_BINS):
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(TEST_LDFLAGS) -lcmocka -lm -lpthread $(TEST_LDLIBS) -o $@

$(OUTPUT)/tests/test_privs: TEST_LDLIBS := -lcap
$(OUTPUT)/tests/test_keeper: TEST_LDLIBS := -lcap
$(OUTPUT)/tests/test_spawn: TEST_LDLIBS := -lcap
$(OUTPUT)/tests/test_tpproto: TEST_LDLIBS := -lbpf -lelf -lz

$(OUTPUT)/tests/helpers/%: $(OUTPUT)/tests/helpers/%.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -lpthread -o $@

# the dispatch floor: empty programs on the slab tracepoints (bench/floor.c)
$(OUTPUT)/bench/floor.bpf.o: bench/peers/floor.bpf.c $(VMLINUX) | check-arch
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(OUTPUT)/bench/floor: $(OUTPUT)/bench/floor.o $(OUTPUT)/bench/floor.bpf.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $< -lbpf -lelf -lz -o $@

$(OUTPUT)/bench/dbscan: $(CORE_LIB)
$(OUTPUT)/bench/nearest: $(CORE_LIB)
$(OUTPUT)/bench/%: $(OUTPUT)/bench/%.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -lm -lpthread -o $@

# ---- GPU stream: the CUPTI injection library (no GPU needed to build) ----

CUPTI_SRCS := cuda/cupti_sub.c cuda/cupti_api.c cuda/batch.c cuda/probes.c
CUPTI_DEPS := $(CUPTI_SRCS) cuda/cupti_sub.h cuda/cupti_api.h cuda/batch.h cuda/probes.h bpf/cachescope.h
# the tests, benchmark and fuzzer link CUPTI (and --wrap it); the library
# looks it up at start (cuda/cupti_api.h), from the toolkit's folders by
# default (RPATH: dlopen follows the caller's)
CUPTI_LINKED := -DCUPTI_SUB_LINKED -L$(CUPTI_LIBDIR) -lcupti -Wl,-rpath,$(CUPTI_LIBDIR)
CUPTI_RPATH := $(CUPTI_LIBDIR):$(CUDA)/extras/CUPTI/lib64

# -z nodelete: threads keep a batch whose destructor is in the library
$(OUTPUT)/libcachescope_cupti.so: $(CUPTI_DEPS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) -fPIC -shared -fvisibility=hidden $(CUPTI_SRCS) \
		-ldl -Wl,-rpath,$(CUPTI_RPATH) -Wl,-z,nodelete -lpthread -o $@

$(OUTPUT)/tests/helpers/nodriver: tests/helpers/nodriver.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) $< -ldl -o $@

# an older CUDA's CUPTI, by its soname, for the tests of the refusal
$(OUTPUT)/tests/helpers/libcupti.so.12: tests/helpers/oldcupti.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Wall -Wextra -Werror -fPIC -shared -Wl,-soname,libcupti.so.12 $< -o $@

$(OUTPUT)/tests/helpers/gpufeed: tests/helpers/gpufeed.c cuda/cupti_sub.h
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) $< -ldl -o $@

# CUPTI's entry points are mocked with --wrap where no driver can answer
$(OUTPUT)/tests/test_cupti: tests/test_cupti.c $(CUPTI_DEPS) \
		$(OUTPUT)/libcachescope_cupti.so $(OUTPUT)/tests/helpers/nodriver \
		$(OUTPUT)/tests/helpers/libcupti.so.12
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) tests/test_cupti.c $(CUPTI_SRCS) \
		$(foreach f,$(CUPTI_WRAPS),-Wl,--wrap=$(f)) $(CUPTI_LINKED) -lcmocka -lpthread -o $@

# the record handler's cost per record, KV decision cache off and on (CPU only)
$(OUTPUT)/bench/cupti_record: bench/cupti_record.c bench/kernel_names.h $(CUPTI_DEPS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) bench/cupti_record.c $(CUPTI_SRCS) $(CUPTI_LINKED) -lpthread -o $@

# an engine's stream of CUPTI records at a set rate (bench/gpu_stream.sh)
$(OUTPUT)/bench/gpu_rate: bench/gpu_rate.c bench/kernel_names.h cuda/cupti_sub.h
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) $< -ldl -o $@

# a real server made to forget every Nth connection (bench/corpus.py)
$(OUTPUT)/tests/helpers/leakclose.so: tests/helpers/leakclose.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Wall -Wextra -Werror -fPIC -shared $< -ldl -o $@

# ---- the CUDA backend of kvref (no GPU needed to build) ----

$(OUTPUT)/cuda/kvref_cuda.o: cuda/kvref_cuda.cu cuda/kvref_kernels.cuh tools/kvref/backend.h \
		tools/kvref/kvcache.h tools/kvref/model.h
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCC_FLAGS) -c $< -o $@

$(OUTPUT)/kvref_cuda.so: $(OUTPUT)/cuda/kvref_cuda.o
	$(call msg,NVLINK,$@)
	$(Q)$(NVCC) -shared -cudart static $< -L$(CUDA)/lib64 -lcublas \
		-Xlinker -rpath,$(CUDA)/lib64 -o $@

# a CUDA program of known work, for the device check (tests/gpu/knownwork.cu);
# it looks for the bundle's libraries in lib/ beside it first
$(OUTPUT)/tests/gpu/knownwork: tests/gpu/knownwork.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCC_FLAGS) -cudart static $< -Xlinker --disable-new-dtags \
		-Xlinker -rpath,'$$ORIGIN/lib' -o $@

# the whole CUDA backend on the host: the same source over tests/helpers/fakecuda
# (runtime and cuBLAS on host memory) and cuda_emu.h (kernels as coroutines);
# with the CUPTI headers, what a driver's CUPTI would record of it goes to
# the injected CUPTI library (tests/helpers/cupti_emu.c)
ifneq ($(HAVE_CUPTI),)
EMU_CUPTI_OBJ := $(OUTPUT)/tests/helpers/cupti_emu.o
EMU_CUPTI_FLAGS := -DKVREF_EMU_CUPTI
endif
$(OUTPUT)/tests/helpers/cupti_emu.o: tests/helpers/cupti_emu.c tests/helpers/cupti_emu.h cuda/cupti_sub.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) -DKVREF_EMU_CUPTI -fPIC -c $< -o $@

$(OUTPUT)/tests/kvref_cuda_emu.so: cuda/kvref_cuda.cu cuda/kvref_kernels.cuh tests/helpers/cuda_emu.h \
		tests/helpers/fakecuda/cuda_runtime.h tests/helpers/fakecuda/cublas_v2.h \
		tests/helpers/cupti_emu.h $(EMU_CUPTI_OBJ) \
		tools/kvref/backend.h tools/kvref/kvcache.h tools/kvref/model.h
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(CFLAGS) -std=c++20 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
		$(EMU_CUPTI_FLAGS) -Itests/helpers/fakecuda -include tests/helpers/cuda_emu.h \
		-x c++ $< -x none $(EMU_CUPTI_OBJ) -ldl -lpthread -o $@

# the same programs over the emulated runtime and driver (no GPU):
# knownwork, and gpumem (a caching allocator's warm-up against a leak)
$(OUTPUT)/tests/gpu/%_emu: tests/gpu/%.cu tests/helpers/cuda_emu.h \
		tests/helpers/fakecuda/cuda_runtime.h tests/helpers/cupti_emu.h $(EMU_CUPTI_OBJ)
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(CFLAGS) -std=c++20 -Wall -Wextra -Werror $(EMU_CUPTI_FLAGS) -Itests/helpers/fakecuda \
		-include tests/helpers/cuda_emu.h -x c++ $< -x none $(EMU_CUPTI_OBJ) -ldl -lpthread \
		$(BUNDLE_RPATH) -o $@

unit-bins: $(UNIT_BINS) $(OUTPUT)/tests/test_kvref_kernels $(filter %/test_cupti,$(CUPTI_BINS)) $(OUTPUT)/kvref

unit: unit-bins
	$(Q)./tests/run.sh unit

# ---- the unit tests again under ASan+UBSan, in their own build folder ----
# (no BPF object, no CUDA .so there); any sanitizer report fails the test.
SAN_OUTPUT := build-asan
SAN_CFLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

unit-asan:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(SAN_OUTPUT) CFLAGS='$(SAN_CFLAGS)' unit-bins
	$(Q)CS_BUILD=$(SAN_OUTPUT) ./tests/run.sh unit

# ---- fuzzing: libFuzzer harnesses, tests/fuzz/fuzz_<name>.c ----
# Each harness is built with clang into its own folder; add one with
#   FUZZERS += <name>
#   $(FUZZ_OUT)/fuzz_<name>: tests/fuzz/fuzz_<name>.c <the sources it tests>
#   FUZZ_EXTRA_fuzz_<name> := <extra compiler/linker flags>     (optional)
# and seeds in tests/fuzz/corpus/<name>/.  'make fuzz' runs each for
# FUZZ_TIME seconds (make fuzz FUZZ_TIME=10 for a quick pass), see
# tests/fuzz/README.md.
FUZZ_OUT ?= build-fuzz
FUZZ_TIME ?= 60
FUZZ_CC ?= clang
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Ibpf -I.
FUZZ_HDRS := $(wildcard bpf/*.h daemon/*.h cluster/*.h tools/kvref/*.h cuda/*.h tests/fuzz/*.h)
FUZZERS :=

FUZZERS += ingest
$(FUZZ_OUT)/fuzz_ingest: tests/fuzz/fuzz_ingest.c daemon/event.c $(WINDOW_SRCS) \
	daemon/features.c daemon/classify.c daemon/analysis.c daemon/strutil.c cluster/dbscan.c \
	daemon/report.c daemon/anomaly.c daemon/change.c daemon/csvschema.c daemon/rowcsv.c daemon/csv.c \
	daemon/rows.c daemon/cgroup.c daemon/kstate.c
FUZZ_EXTRA_fuzz_ingest := -lm -lz $(JSONC_LIBS)

FUZZERS += args
$(FUZZ_OUT)/fuzz_args: tests/fuzz/fuzz_args.c daemon/args.c daemon/strutil.c daemon/metrics.c \
	daemon/classify.c

FUZZERS += rules
$(FUZZ_OUT)/fuzz_rules: tests/fuzz/fuzz_rules.c daemon/classify.c daemon/strutil.c
FUZZ_EXTRA_fuzz_rules := -lm

FUZZERS += csvread
$(FUZZ_OUT)/fuzz_csvread: tests/fuzz/fuzz_csvread.c daemon/csvread.c daemon/csv.c daemon/strutil.c

# cachescope cluster end to end: the CSV as the one file it reads
FUZZERS += cluster
$(FUZZ_OUT)/fuzz_cluster: tests/fuzz/fuzz_cluster.c tools/offline.c tools/svg.c tools/pca.c \
	tools/cli.c $(filter-out %/main.c,$(wildcard $(CORE_MODS:%=daemon/%.c))) cluster/dbscan.c
FUZZ_EXTRA_fuzz_cluster := -lm -lz $(JSONC_LIBS)

FUZZERS += model
$(FUZZ_OUT)/fuzz_model: tests/fuzz/fuzz_model.c tools/kvref/model.c tools/kvref/kvcache.c
FUZZ_EXTRA_fuzz_model := -lm -lpthread

# the CUPTI library's record handler and KV-name matcher; no CUPTI call
# that needs a driver is made, so no --wrap: -lcupti only resolves them
ifneq ($(HAVE_CUPTI),)
FUZZERS += cupti
$(FUZZ_OUT)/fuzz_cupti: tests/fuzz/fuzz_cupti.c cuda/cupti_sub.c cuda/cupti_api.c cuda/batch.c cuda/probes.c
FUZZ_EXTRA_fuzz_cupti := -D_GNU_SOURCE -I$(CUDA)/include $(CUPTI_LINKED) -lpthread
endif
# the CUPTI library's bins: exact sums, and none the daemon would reject
FUZZERS += batch
$(FUZZ_OUT)/fuzz_batch: tests/fuzz/fuzz_batch.c cuda/batch.c daemon/usdt.c
# the daemon's ingest of kv and gpu probe records (bounds, the kv queue)
FUZZERS += usdt
$(FUZZ_OUT)/fuzz_usdt: tests/fuzz/fuzz_usdt.c $(WINDOW_SRCS)
FUZZ_EXTRA_fuzz_usdt := -D_GNU_SOURCE -lm

# the control protocol's request lines and error answers (report.c)
FUZZERS += request
$(FUZZ_OUT)/fuzz_request: tests/fuzz/fuzz_request.c daemon/report.c daemon/anomaly.c daemon/change.c \
	daemon/classify.c cluster/dbscan.c $(WINDOW_SRCS) daemon/strutil.c
FUZZ_EXTRA_fuzz_request := -lm $(JSONC_LIBS)

# libFuzzer harness of the control protocol's requests (make fuzz)
FUZZERS += control
$(FUZZ_OUT)/fuzz_control: tests/fuzz/fuzz_control.c daemon/control.c daemon/loop.c

FUZZ_BINS = $(FUZZERS:%=$(FUZZ_OUT)/fuzz_%)

$(FUZZ_OUT)/fuzz_%: $(FUZZ_HDRS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(filter %.c,$^) $(FUZZ_EXTRA_$(@F)) -o $@

fuzz-bins: $(FUZZ_BINS)

fuzz: fuzz-bins
	$(Q)./tests/fuzz/run.sh $(FUZZ_OUT) $(FUZZ_TIME) $(FUZZERS)

integration: $(BINS) $(INTEG_BINS) $(HELPER_BINS) $(OUTPUT)/bench/slabload $(OUTPUT)/tests/helpers/leakclose.so
	$(Q)./tests/run.sh integration

# set-up first, then build, then run: a fresh machine needs the packages
# before make can even compile
test: test-deps
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(SAN_OUTPUT) CFLAGS='$(SAN_CFLAGS)' unit-bins
	$(Q)CS_SAN_BUILD=$(SAN_OUTPUT) ./tests/run.sh all

# ---- install: what an operator runs, nothing of the tests ----
INSTALL ?= install
INSTALL_LIBS := $(filter %.so,$(CUPTI_BINS)) $(CUDA_BINS)
UNIT_IN := tools/systemd/cachescoped.service.in
DASHBOARD := tools/grafana/cachescope.json

$(OUTPUT)/cachescoped.service: $(UNIT_IN) FORCE
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
		-e 's|@DEFAULTFILE@|$(DEFAULTDIR)/cachescoped|g' $< > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

install: $(BINS) $(INSTALL_LIBS) $(OUTPUT)/cachescoped.service
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PKGLIBDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(DATADIR)/cachescope/grafana $(DESTDIR)$(DATADIR)/cachescope/prometheus \
		$(DESTDIR)$(DATADIR)/cachescope/clickhouse $(DESTDIR)$(DEFAULTDIR)
	$(Q)$(INSTALL) -m 0755 $(OUTPUT)/cachescoped $(DESTDIR)$(SBINDIR)/cachescoped
	$(Q)$(INSTALL) -m 0755 $(OUTPUT)/cachescope $(DESTDIR)$(BINDIR)/cachescope
	$(Q)$(INSTALL) -m 0755 $(OUTPUT)/kvref $(DESTDIR)$(PKGLIBDIR)/kvref
	$(Q)$(foreach f,$(INSTALL_LIBS),$(INSTALL) -m 0755 $(f) $(DESTDIR)$(PKGLIBDIR)/$(notdir $(f)) &&) true
	$(Q)ln -sfn $(PKGLIBDIR)/kvref $(DESTDIR)$(BINDIR)/kvref
	$(Q)$(INSTALL) -m 0644 man/cachescoped.8 $(DESTDIR)$(MANDIR)/man8/cachescoped.8
	$(Q)$(INSTALL) -m 0644 man/cachescope.1 $(DESTDIR)$(MANDIR)/man1/cachescope.1
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)/cachescoped.service $(DESTDIR)$(UNITDIR)/cachescoped.service
	$(Q)$(INSTALL) -m 0644 $(DASHBOARD) $(DESTDIR)$(DATADIR)/cachescope/grafana/cachescope.json
	$(Q)$(INSTALL) -m 0644 tools/prometheus/cachescope.rules.yml \
		$(DESTDIR)$(DATADIR)/cachescope/prometheus/cachescope.rules.yml
	$(Q)$(INSTALL) -m 0644 tools/clickhouse/schema.sql $(DESTDIR)$(DATADIR)/cachescope/clickhouse/schema.sql
	$(Q)# the operator's own options are kept; the commented defaults otherwise
	$(Q)[ -e $(DESTDIR)$(DEFAULTDIR)/cachescoped ] || \
		$(INSTALL) -m 0644 tools/systemd/cachescoped.default $(DESTDIR)$(DEFAULTDIR)/cachescoped

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/cachescoped $(DESTDIR)$(BINDIR)/cachescope \
		$(DESTDIR)$(BINDIR)/kvref $(DESTDIR)$(PKGLIBDIR)/kvref \
		$(DESTDIR)$(PKGLIBDIR)/libcachescope_cupti.so $(DESTDIR)$(PKGLIBDIR)/kvref_cuda.so \
		$(DESTDIR)$(MANDIR)/man8/cachescoped.8 $(DESTDIR)$(MANDIR)/man1/cachescope.1 \
		$(DESTDIR)$(UNITDIR)/cachescoped.service \
		$(DESTDIR)$(DATADIR)/cachescope/grafana/cachescope.json \
		$(DESTDIR)$(DATADIR)/cachescope/prometheus/cachescope.rules.yml \
		$(DESTDIR)$(DATADIR)/cachescope/clickhouse/schema.sql
	$(Q)# the options file is the operator's: kept unless it is still ours
	$(Q)! cmp -s tools/systemd/cachescoped.default $(DESTDIR)$(DEFAULTDIR)/cachescoped || \
		rm -f $(DESTDIR)$(DEFAULTDIR)/cachescoped
	$(Q)rmdir $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(DATADIR)/cachescope/grafana \
		$(DESTDIR)$(DATADIR)/cachescope/prometheus $(DESTDIR)$(DATADIR)/cachescope/clickhouse \
		$(DESTDIR)$(DATADIR)/cachescope 2>/dev/null || true

# ---- the GPU device check's bundle: everything a bare GPU machine (no
# network, no Debian packages) needs to run tests/gpu/device-check.sh, in
# one folder and one tarball of at most 64 MiB (tools/gpu-bundle.sh copies
# the shared-library closure; cuBLAS, 0.6 GB, is the GPU machine's own) ----
BUNDLE_DIR := $(OUTPUT)/gpu-bundle/cachescope-gpu
BUNDLE_TAR := $(OUTPUT)/cachescope-gpu.tar.gz
BUNDLE_PROGS := $(BUNDLE_DIR)/cachescoped $(BUNDLE_DIR)/cachescope $(BUNDLE_DIR)/kvref \
	$(BUNDLE_DIR)/knownwork_emu $(BUNDLE_DIR)/kvref_cuda_emu.so \
	$(if $(HAVE_CUPTI),$(BUNDLE_DIR)/libcachescope_cupti.so) \
	$(if $(HAVE_NVCC),$(BUNDLE_DIR)/kvref_cuda.so $(BUNDLE_DIR)/knownwork)

$(BUNDLE_DIR)/cachescoped: $(filter-out $(CORE_OBJS),$(DAEMON_OBJS)) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) $(BUNDLE_RPATH) -o $@

$(BUNDLE_DIR)/kvref: $(KVREF_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -rdynamic $^ -lm -lpthread -ldl $(BUNDLE_RPATH) -o $@

$(BUNDLE_DIR)/cachescope: $(OUTPUT)/tools/cachescope.o $(OFFLINE_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $^ $(JSONC_LIBS) -lm $(BUNDLE_RPATH) -o $@

# injected by path or by /proc/self/fd/N, where $$ORIGIN says nothing: the
# RPATH (not RUNPATH) lets the process's own RPATH find lib/libcupti.so.13
$(BUNDLE_DIR)/libcachescope_cupti.so: $(CUPTI_DEPS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) -fPIC -shared -fvisibility=hidden $(CUPTI_SRCS) \
		-ldl -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/lib:$(CUPTI_RPATH)' \
		-Wl,-z,nodelete -lpthread -o $@

$(BUNDLE_DIR)/kvref_cuda.so: $(OUTPUT)/cuda/kvref_cuda.o
	$(call msg,NVLINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -shared -cudart static $< -L$(CUDA)/lib64 -lcublas -Xlinker --disable-new-dtags \
		-Xlinker -rpath,'$$ORIGIN/lib:$(CUDA)/lib64' -o $@

$(BUNDLE_DIR)/%: $(OUTPUT)/tests/gpu/%
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

$(BUNDLE_DIR)/kvref_cuda_emu.so: $(OUTPUT)/tests/kvref_cuda_emu.so
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

gpu-bundle: $(BUNDLE_PROGS) tests/gpu/device-check.sh tools/gpu-bundle.sh
	$(call msg,BUNDLE,$(BUNDLE_TAR))
	$(Q)CUPTI_SO=$(CUPTI_LIBDIR)/libcupti.so.13 ./tools/gpu-bundle.sh $(BUNDLE_DIR) $(BUNDLE_TAR)

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BACKEND=$(BACKEND) ./tools/demo.sh

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT) $(SAN_OUTPUT) $(FUZZ_OUT)

-include $(ALL_OBJS:.o=.d) $(OUTPUT)/cachescope.bpf.d
