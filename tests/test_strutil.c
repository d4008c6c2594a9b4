// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the terminal escaping (daemon/strutil.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "../daemon/strutil.h"

static void str_escape__plain_and_utf8__unchanged(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(str_escape(buf, sizeof(buf), "kmalloc-64", 0), "kmalloc-64");
	/* é, €, 𝄞: two, three and four bytes */
	assert_string_equal(str_escape(buf, sizeof(buf), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e", 0),
			    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e");
	assert_string_equal(str_escape(buf, sizeof(buf), "", 0), "");
}

static void str_escape__c0_del_and_csi__hex(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(str_escape(buf, sizeof(buf), "\x1b[31mevil", 0), "\\x1b[31mevil");
	assert_string_equal(str_escape(buf, sizeof(buf), "a\x7f" "b\rc\x07", 0),
			    "a\\x7fb\\x0dc\\x07");
	/* one line stays one line: LF and TAB too, unless kept */
	assert_string_equal(str_escape(buf, sizeof(buf), "a\nb\tc", 0), "a\\x0ab\\x09c");
	assert_string_equal(str_escape(buf, sizeof(buf), "a\nb\tc\x1b", STR_KEEP_NL),
			    "a\nb\tc\\x1b");
	/* a backslash cannot fake an escape */
	assert_string_equal(str_escape(buf, sizeof(buf), "\\x1b", 0), "\\\\x1b");
}

static void str_escape__c1_and_invalid_utf8__hex_per_byte(void **state)
{
	char buf[64];

	(void)state;
	/* U+009B, the one-character CSI, in UTF-8 and as a bare byte */
	assert_string_equal(str_escape(buf, sizeof(buf), "\xc2\x9b" "31m", 0), "\\xc2\\x9b31m");
	assert_string_equal(str_escape(buf, sizeof(buf), "\x9b" "31m", 0), "\\x9b31m");
	/* overlong ESC, a surrogate, past U+10FFFF, a truncated sequence */
	assert_string_equal(str_escape(buf, sizeof(buf), "\xc0\x9b", 0), "\\xc0\\x9b");
	assert_string_equal(str_escape(buf, sizeof(buf), "\xed\xa0\x80", 0), "\\xed\\xa0\\x80");
	assert_string_equal(str_escape(buf, sizeof(buf), "\xf4\x90\x80\x80", 0),
			    "\\xf4\\x90\\x80\\x80");
	assert_string_equal(str_escape(buf, sizeof(buf), "ab\xe2\x82", 0), "ab\\xe2\\x82");
	/* U+202E, right-to-left override */
	assert_string_equal(str_escape(buf, sizeof(buf), "x\xe2\x80\xaey", 0), "x\\xe2\\x80\\xaey");
}

static void str_escape_mem__nul_inside__hex(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(str_escape_mem(buf, sizeof(buf), "a\0b", 3, 0), "a\\x00b");
}

static void str_escape__short_buffer__no_half_escape(void **state)
{
	char buf[6], big[STR_ESC_SIZE(16)];
	const char *worst = "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10";

	(void)state;
	/* "ab" fits, "\x1b" (4) would need 7 bytes with the NUL */
	assert_string_equal(str_escape(buf, sizeof(buf), "ab\x1b", 0), "ab");
	assert_string_equal(str_escape(buf, 4, "\xe2\x82\xac\xe2\x82\xac", 0), "\xe2\x82\xac");
	assert_string_equal(str_escape(buf, 1, "abc", 0), "");
	/* STR_ESC_SIZE holds the worst case whole */
	assert_int_equal(strlen(str_escape(big, sizeof(big), worst, 0)), 64);
}

static void str_to_long__number_range_and_garbage__checked(void **state)
{
	long v = 7;

	(void)state;
	assert_int_equal(str_to_long("42", 1, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(str_to_long("-3", -5, 5, &v), 0);
	assert_int_equal(v, -3);
	v = 7;
	assert_int_equal(str_to_long("101", 1, 100, &v), -ERANGE);
	assert_int_equal(str_to_long("0", 1, 100, &v), -ERANGE);
	assert_int_equal(str_to_long("99999999999999999999", 1, 100, &v), -ERANGE);
	assert_int_equal(str_to_long("", 1, 100, &v), -EINVAL);
	assert_int_equal(str_to_long("12x", 1, 100, &v), -EINVAL);
	assert_int_equal(str_to_long("ten", 1, 100, &v), -EINVAL);
	assert_int_equal(str_to_long("5 ", 1, 100, &v), -EINVAL);
	assert_int_equal(v, 7);	/* untouched on failure */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(str_escape__plain_and_utf8__unchanged),
		cmocka_unit_test(str_escape__c0_del_and_csi__hex),
		cmocka_unit_test(str_escape__c1_and_invalid_utf8__hex_per_byte),
		cmocka_unit_test(str_escape_mem__nul_inside__hex),
		cmocka_unit_test(str_escape__short_buffer__no_half_escape),
		cmocka_unit_test(str_to_long__number_range_and_garbage__checked),
	};

	return cmocka_run_group_tests_name("strutil", tests, NULL, NULL);
}
