// SPDX-License-Identifier: GPL-2.0-only
/*
 * Replays fuzz inputs without libFuzzer: `make test` runs every harness over
 * its seed corpus and its regression corpus (inputs that once crashed), built
 * with the same compiler flags as the tools (ASan+UBSan under SANITIZE=1).
 * Prints one TAP line per directory.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int tap = 0, bad = 0;

	printf("1..%d\n", argc - 1);
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		int n = 0, err = 0;

		if (d) {
			while ((de = readdir(d))) {
				char path[4096];
				struct stat st;

				snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
				if (stat(path, &st) || !S_ISREG(st.st_mode))
					continue;
				err |= replay_file(path);
				n++;
			}
			closedir(d);
		}
		/* a crash never gets here: the runner reports the exit status */
		printf("%s %d - %s: %d inputs replayed\n", err ? "not ok" : "ok", ++tap, argv[i], n);
		bad |= err;
	}
	return bad;
}
