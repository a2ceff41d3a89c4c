// SPDX-License-Identifier: GPL-2.0-only
/* lib/netns.c (written for quickack, shared): names, missing namespaces, and coming back */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tk_assert.h"

#include "netns.h"

static void test_names(void **state)
{
	char msg[256], longname[300];
	(void)state;

	assert_int_equal(netns_check_name("rp-recv", msg, sizeof(msg)), 0);
	assert_int_equal(netns_check_name("a b", msg, sizeof(msg)), 0);
	assert_int_equal(netns_check_name("", msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "network namespace name '' is empty");
	assert_int_equal(netns_check_name("a/b", msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "network namespace name 'a/b' is not a plain name (no '/', not '.' or '..')");
	assert_int_equal(netns_check_name("..", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(netns_check_name(".", msg, sizeof(msg)), -EINVAL);
	memset(longname, 'x', 299);
	longname[299] = '\0';
	assert_int_equal(netns_check_name(longname, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "is too long"));
	assert_int_equal(netns_check_name(NULL, msg, sizeof(msg)), -EINVAL);
}

static void test_missing(void **state)
{
	char name[64], msg[256], want[256];
	(void)state;

	snprintf(name, sizeof(name), "qa-unit-missing-%d", (int)getpid());
	assert_int_equal(netns_open(name, msg, sizeof(msg)), -ENOENT);
	snprintf(want, sizeof(want), "network namespace '%s' does not exist (no %s/%s)", name, NETNS_RUN_DIR, name);
	assert_string_equal(msg, want);
	assert_int_equal(netns_enter(name, msg, sizeof(msg)), -ENOENT);
	assert_string_equal(msg, want);
	assert_int_equal(netns_enter("a/b", msg, sizeof(msg)), -EINVAL);
}

static void test_save_and_return(void **state)
{
	uint64_t before = 0, after = 0;
	int fd;
	(void)state;

	assert_int_equal(netns_current_inode(&before), 0);
	tk_assert_cmp(before, >, 0);
	fd = netns_save();
	tk_assert_cmp(fd, >=, 0);
	/* entering the namespace we are in: allowed for root, EPERM for others */
	if (geteuid() == 0)
		assert_int_equal(netns_enter_fd(fd), 0);
	else
		assert_int_equal(netns_enter_fd(fd), -EPERM);
	assert_int_equal(netns_current_inode(&after), 0);
	assert_int_equal(before, after);
	close(fd);
	/* not a namespace at all */
	fd = dup(0);
	assert_int_equal(netns_enter_fd(fd) < 0, 1);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_save_and_return),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
