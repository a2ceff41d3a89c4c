// SPDX-License-Identifier: GPL-2.0-only
/*
 * Routing table names: main, local and default, and those of iproute2's
 * rt_tables files, each way between name and number.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route.h"

struct table_name {
	uint32_t id;
	char name[64];
};

static struct table_name *table_names;
static size_t n_table_names;
static bool table_names_loaded;

static void add_table_name(uint32_t id, const char *name)
{
	struct table_name *t = realloc(table_names, (n_table_names + 1) * sizeof(*t));

	if (!t)
		return;
	table_names = t;
	t[n_table_names].id = id;
	snprintf(t[n_table_names].name, sizeof(t[n_table_names].name), "%s", name);
	n_table_names++;
}

/* iproute2's format: "ID NAME" per line, '#' comments; ID decimal or 0x hex */
static void read_table_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end, name[64];
		unsigned long id;

		while (isspace((unsigned char)*p))
			p++;
		if (*p == '#' || !*p)
			continue;
		errno = 0;
		id = strtoul(p, &end, 0);
		if (end == p || errno || id > UINT32_MAX)
			continue;
		if (sscanf(end, " %63[^ \t\n#]", name) == 1)
			add_table_name((uint32_t)id, name);
	}
	fclose(f);
}

static void read_table_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[512];

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n > 5 && !strcmp(de->d_name + n - 5, ".conf")) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			read_table_file(path);
		}
	}
	closedir(d);
}

static void load_table_names(void)
{
	if (table_names_loaded)
		return;
	table_names_loaded = true;
	add_table_name(RT_TABLE_DEFAULT, "default");
	add_table_name(RT_TABLE_MAIN, "main");
	add_table_name(RT_TABLE_LOCAL, "local");
	read_table_file("/etc/iproute2/rt_tables");
	read_table_dir("/etc/iproute2/rt_tables.d");
	read_table_file("/usr/share/iproute2/rt_tables");
	read_table_dir("/usr/share/iproute2/rt_tables.d");
}

int qa_table_parse(const char *s, uint32_t *id)
{
	if (!s || !*s)
		return -1;
	if (!strcmp(s, "all")) {
		*id = QA_TABLE_ALL;
		return 0;
	}
	if (isdigit((unsigned char)s[0])) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(s, &end, 10);
		if (*end)
			return -1; /* "5x": a name, and no table has it */
		if (errno || v == 0 || v > UINT32_MAX)
			return -2;
		*id = (uint32_t)v;
		return 0;
	}
	load_table_names();
	for (size_t i = 0; i < n_table_names; i++) {
		if (!strcmp(table_names[i].name, s)) {
			*id = table_names[i].id;
			return 0;
		}
	}
	return -1;
}

const char *qa_table_str(uint32_t id, char *buf, size_t cap)
{
	load_table_names();
	for (size_t i = 0; i < n_table_names; i++) {
		if (table_names[i].id == id) {
			snprintf(buf, cap, "%s", table_names[i].name);
			return buf;
		}
	}
	snprintf(buf, cap, "%u", id);
	return buf;
}
