/* Unit tests for elf/fde: .eh_frame and .debug_frame built byte by byte
 * (out of order, truncated, a broken CIE pointer, an old "eh" CIE), and the
 * ranges of a real stripped binary read and searched. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/elf/fde.h"
#include "stacktop/unwind/space.h"
#include "helpers.h"
#include "symtest.h"

struct bytes {
	uint8_t b[1024];
	size_t n;
};

static void put(struct bytes *b, uint64_t v, int len)
{
	for (int i = 0; i < len; i++)
		b->b[b->n++] = (uint8_t)(v >> (8 * i));
}

static void patch_len(struct bytes *b, size_t at)
{
	while ((b->n - at) % 4)
		put(b, 0, 1); /* DW_CFA_nop */
	uint64_t len = b->n - at - 4;
	for (int i = 0; i < 4; i++)
		b->b[at + (size_t)i] = (uint8_t)(len >> (8 * i));
}

/* A .eh_frame CIE with augmentation "zR", FDE pointers pc-relative sdata4. */
static size_t eh_cie(struct bytes *b)
{
	size_t at = b->n;

	put(b, 0, 4); /* length, patched */
	put(b, 0, 4); /* CIE id */
	put(b, 1, 1); /* version */
	memcpy(b->b + b->n, "zR", 3);
	b->n += 3;
	put(b, 1, 1);	 /* code alignment */
	put(b, 0x78, 1); /* data alignment -8 */
	put(b, 16, 1);	 /* return address register */
	put(b, 1, 1);	 /* augmentation data length */
	put(b, 0x1b, 1); /* DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
	patch_len(b, at);
	return at;
}

/* An FDE of cie for [start, start + len); returns its offset. */
static size_t eh_fde(struct bytes *b, size_t cie, uint64_t sec, uint64_t start, uint32_t len)
{
	size_t at = b->n, pc;

	put(b, 0, 4);
	put(b, b->n - cie, 4); /* CIE pointer: back from this field */
	pc = b->n;
	put(b, (uint32_t)(start - (sec + pc)), 4);
	put(b, len, 4);
	put(b, 0, 1); /* augmentation data length */
	patch_len(b, at);
	return at;
}

static void test_fde_parse(void **state)
{
	struct bytes b = {0}, d = {0};
	struct fde_range *r;
	size_t n, cie, k, f1;

	(void)state;
	/* .eh_frame at 0x2000: two FDEs out of order, a zero terminator. */
	cie = eh_cie(&b);
	f1 = eh_fde(&b, cie, 0x2000, 0x1100, 0x40);
	eh_fde(&b, cie, 0x2000, 0x1000, 0x80);
	put(&b, 0, 4);
	assert_int_equal(fde_parse(b.b, b.n, 0x2000, false, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].start, 0x1000);
	assert_int_equal(r[0].end, 0x1080);
	assert_int_equal(r[1].start, 0x1100);
	assert_int_equal(r[1].end, 0x1140);
	free(r);
	/* Every truncation reads what it can and no further. */
	for (k = 0; k < b.n; k++) {
		assert_int_equal(fde_parse(b.b, k, 0x2000, false, &r, &n), 0);
		assert_true(n <= 2);
		free(r);
	}
	/* An FDE whose CIE pointer leads to no CIE is skipped, not trusted. */
	b.b[f1 + 4] += 4;
	assert_int_equal(fde_parse(b.b, b.n, 0x2000, false, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 0x1000);
	free(r);

	/* An old "eh" CIE whose 8-byte EH pointer runs past its entry: its
	 * FDEs are skipped, nothing is read beyond the entry. */
	memset(&b, 0, sizeof(b));
	put(&b, 9, 4);
	put(&b, 0, 4);
	put(&b, 1, 1);
	memcpy(b.b + b.n, "eh", 3);
	b.n += 3;
	put(&b, 0, 1);
	eh_fde(&b, 0, 0x2000, 0x1000, 0x20);
	assert_int_equal(fde_parse(b.b, b.n, 0x2000, false, &r, &n), 0);
	assert_int_equal(n, 0);
	free(r);

	/* .debug_frame: CIE id 0xffffffff, absolute 8-byte addresses. */
	put(&d, 0, 4);
	put(&d, 0xffffffffu, 4);
	put(&d, 1, 1);
	put(&d, 0, 1); /* augmentation "" */
	put(&d, 1, 1);
	put(&d, 0x78, 1);
	put(&d, 16, 1);
	patch_len(&d, 0);
	size_t at = d.n;
	put(&d, 0, 4);
	put(&d, 0, 4); /* CIE pointer: offset of the CIE in the section */
	put(&d, 0x401000, 8);
	put(&d, 0x30, 8);
	patch_len(&d, at);
	assert_int_equal(fde_parse(d.b, d.n, 0, true, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 0x401000);
	assert_int_equal(r[0].end, 0x401030);
	free(r);
}

/* A stripped binary still has an FDE per function: inl_outer's range holds
 * its pcs and starts at its symbol (read from the unstripped file). */
static void test_fde_read_find(void **state)
{
	char bin[PATH_MAX];
	const struct fde_range *hit;
	struct fde_range *r;
	struct module *mod;
	uint64_t outer;
	size_t n;

	(void)state;
	target_path(bin, sizeof(bin), "inltest-stripped");
	outer = target_symbol("inltest", "inl_outer");
	assert_int_equal(space_module_open_path(bin, &mod), 0);
	assert_int_equal(fde_read(mod->elf, &r, &n), 0);
	assert_true(n > 0);
	for (size_t i = 1; i < n; i++)
		assert_true(r[i - 1].start <= r[i].start);
	hit = fde_find(r, n, outer + 0x10);
	assert_non_null(hit);
	assert_int_equal(hit->start, outer);
	assert_true(hit->end > outer + 0x10);
	assert_null(fde_find(r, n, 0));
	assert_null(fde_find(r, 0, outer));
	free(r);
	space_module_put(mod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_fde_parse),
	    TEST(test_fde_read_find),
	};
	symtest_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
