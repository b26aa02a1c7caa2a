/* storeq: read a store's SQLite file with the SQLite C API alone, as
 * another program would (the tests check what leaksnap store wrote
 * without leaksnap's own reader).
 *
 *   storeq DB SQL     each row one line, columns joined by '|'; integers
 *                     as signed decimals, blobs as x'HEX', NULL as NULL,
 *                     text with every byte outside printable ASCII and '\'
 *                     as \xNN
 *   storeq --busy DB  exit 3 when another connection holds the write lock
 *                     (a writer is in its transaction), 0 when not
 *   storeq --write DB SQL  run SQL that changes the file (a test making a
 *                     store of another version)
 *
 * Opens the file read-only but for --write and --busy.  Exit 2 on errors. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static void put_text(const unsigned char *t, int n)
{
	for (int i = 0; i < n; i++) {
		if (t[i] < 0x20 || t[i] >= 0x7f || t[i] == '\\')
			printf("\\x%02x", t[i]);
		else
			putchar(t[i]);
	}
}

static int busy(const char *path)
{
	sqlite3 *db;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		fprintf(stderr, "storeq: %s: %s\n", path, sqlite3_errmsg(db));
		return 2;
	}
	int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : rc == SQLITE_BUSY ? 3 : 2;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--busy") == 0)
		return busy(argv[2]);
	if (argc == 4 && strcmp(argv[1], "--write") == 0) {
		sqlite3 *db;
		char *msg = NULL;
		int ok = sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
			 sqlite3_exec(db, argv[3], NULL, NULL, &msg) == SQLITE_OK;
		if (!ok)
			fprintf(stderr, "storeq: %s: %s\n", argv[2], msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_close(db);
		return ok ? 0 : 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: storeq DB SQL | storeq --busy DB | storeq --write DB SQL\n");
		return 2;
	}
	sqlite3 *db;
	sqlite3_stmt *st;
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_busy_timeout(db, 60000) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, argv[2], -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "storeq: %s: %s\n", argv[1], sqlite3_errmsg(db));
		return 2;
	}
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			if (c)
				putchar('|');
			switch (sqlite3_column_type(st, c)) {
			case SQLITE_INTEGER:
				printf("%lld", (long long)sqlite3_column_int64(st, c));
				break;
			case SQLITE_FLOAT:
				printf("%.17g", sqlite3_column_double(st, c));
				break;
			case SQLITE_NULL:
				printf("NULL");
				break;
			case SQLITE_BLOB: {
				const unsigned char *b = sqlite3_column_blob(st, c);
				int n = sqlite3_column_bytes(st, c);
				printf("x'");
				for (int i = 0; i < n; i++)
					printf("%02x", b[i]);
				printf("'");
				break;
			}
			default:
				put_text(sqlite3_column_text(st, c), sqlite3_column_bytes(st, c));
			}
		}
		putchar('\n');
	}
	int ok = rc == SQLITE_DONE;
	if (!ok)
		fprintf(stderr, "storeq: %s: %s\n", argv[1], sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ok && fflush(stdout) == 0 ? 0 : 2;
}
