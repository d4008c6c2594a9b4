// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPython 3.11 layout stack.bpf.h reads (CS_PY_* in bpf/cachescope.h)
 * against CPython 3.11's own headers (Debian's python3.11-dev, internal
 * headers with Py_BUILD_CORE): a constant that disagrees fails here.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../bpf/cachescope.h"

static void pyoffsets__cpython_311__as_the_headers_say(void **state)
{
	(void)state;
	assert_int_equal(PY_MAJOR_VERSION, 3);
	assert_int_equal(PY_MINOR_VERSION, 11);
	assert_int_equal(CS_PY_RT_INTERP_HEAD, offsetof(_PyRuntimeState, interpreters.head));
	assert_int_equal(CS_PY_IS_THREADS_HEAD, offsetof(PyInterpreterState, threads.head));
	assert_int_equal(CS_PY_TS_NEXT, offsetof(PyThreadState, next));
	assert_int_equal(CS_PY_TS_CFRAME, offsetof(PyThreadState, cframe));
	assert_int_equal(CS_PY_TS_NATIVE_ID, offsetof(PyThreadState, native_thread_id));
	assert_int_equal(CS_PY_CF_CURRENT, offsetof(_PyCFrame, current_frame));
	assert_int_equal(CS_PY_IF_CODE, offsetof(_PyInterpreterFrame, f_code));
	assert_int_equal(CS_PY_IF_PREVIOUS, offsetof(_PyInterpreterFrame, previous));
	assert_int_equal(CS_PY_CO_FIRSTLINENO, offsetof(PyCodeObject, co_firstlineno));
	assert_int_equal(CS_PY_CO_FILENAME, offsetof(PyCodeObject, co_filename));
	assert_int_equal(CS_PY_CO_QUALNAME, offsetof(PyCodeObject, co_qualname));
	assert_int_equal(CS_PY_STR_LENGTH, offsetof(PyASCIIObject, length));
	assert_int_equal(CS_PY_STR_ASCII_DATA, sizeof(PyASCIIObject));
	/* the state word: interned (2 bits), kind (3), compact, ascii */
	{
		PyASCIIObject o;

		memset(&o, 0, sizeof(o));
		o.state.compact = 1;
		o.state.ascii = 1;
		assert_int_equal(*(uint32_t *)((char *)&o + CS_PY_STR_STATE), 0x60);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pyoffsets__cpython_311__as_the_headers_say),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
