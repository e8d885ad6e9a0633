// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/*
 * unit_bss_layout.c - user/kernel/bss_layout.c: this build's .bss read from
 * its BTF agrees with the skeleton the compiler laid out, and values carried
 * between two layouts go by name (issue 40: pinned state versioned).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <bpf/btf.h>
#include "check_util.h"
#include "bss_layout.h"
#include "memacct.h"
#include "memacct.skel.h"

static const struct bss_var *var_of(const struct bss_layout *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

/* The layout read from the object's BTF is where the skeleton's struct,
 * which the compiler laid out from the same object, has each variable. */
START_TEST(test_object_layout_is_the_skeleton)
{
	struct memacct_bpf *skel = memacct_bpf__open();
	struct bss_layout l;
	const struct bss_var *v;

	ck_assert_ptr_nonnull(skel);
	ck_assert_int_eq(bss_layout_of_object(skel->obj, &l), 0);
	ck_assert_uint_eq(l.size, bpf_map__value_size(skel->maps.bss));
	/* the pins read the .bss as the skeleton's struct (pin.c bss_read()):
	 * a section that ends on a 4-byte variable is 4 bytes short of it, and
	 * every pinned counter would then read as unknown */
	ck_assert_uint_eq(bpf_map__value_size(skel->maps.bss), sizeof(struct memacct_bpf__bss));
	ck_assert_int_gt(l.n, 10);
#define SKEL_VAR(f) do { \
		v = var_of(&l, #f); \
		ck_assert_msg(v, "no " #f " in the .bss layout"); \
		ck_assert_uint_eq(v->off, offsetof(struct memacct_bpf__bss, f)); \
		ck_assert_uint_eq(v->size, sizeof(skel->bss->f)); \
	} while (0)
	SKEL_VAR(dropped);
	SKEL_VAR(links_pinned);
	SKEL_VAR(oom_seq);
	SKEL_VAR(nv_calls);
	SKEL_VAR(flow_moves_end);
#undef SKEL_VAR
	for (int i = 1; i < l.n; i++)
		ck_assert_uint_ge(l.v[i].off, l.v[i - 1].off + l.v[i - 1].size);
	bss_layout_free(&l);
	memacct_bpf__destroy(skel);
}
END_TEST

/* A DATASEC of u64 variables named @names (NULL-terminated), in that
 * order, packed; its id. */
static int datasec_of(struct btf *btf, const char *const *names)
{
	int u64 = btf__add_int(btf, "unsigned long long", 8, 0), ids[8], n = 0, sec;

	ck_assert_int_gt(u64, 0);
	for (; names[n]; n++)
		ck_assert_int_gt(ids[n] = btf__add_var(btf, names[n], BTF_VAR_GLOBAL_ALLOCATED,
						       u64), 0);
	sec = btf__add_datasec(btf, ".bss", 8 * n);
	ck_assert_int_gt(sec, 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(btf__add_datasec_var_info(btf, ids[i], 8 * i, 8), 0);
	return sec;
}

/* Reordered, one gone, one new, one of another size: each carried by name
 * or counted, never read from another variable's place. */
START_TEST(test_carry_by_name)
{
	static const char *const old_names[] = { "a", "b", "gone", "c", NULL };
	static const char *const new_names[] = { "c", "fresh", "a", "b", NULL };
	struct btf *ob = btf__new_empty(), *nb = btf__new_empty();
	struct bss_layout from, to;
	struct bss_carry c;
	uint64_t old_val[4] = { 11, 22, 33, 44 }, new_val[4] = { 0, 7, 0, 0 };

	ck_assert_int_eq(bss_layout_from_btf(ob, datasec_of(ob, old_names), &from), 0);
	ck_assert_int_eq(bss_layout_from_btf(nb, datasec_of(nb, new_names), &to), 0);
	ck_assert_int_eq(from.n, 4);
	ck_assert_str_eq(from.v[2].name, "gone");
	ck_assert(!bss_layout_equal(&from, &to));
	ck_assert(bss_layout_equal(&from, &from));
	bss_layout_carry(&from, old_val, &to, new_val, &c);
	ck_assert_uint_eq(new_val[0], 44);	/* c */
	ck_assert_uint_eq(new_val[1], 7);	/* fresh: its initial value */
	ck_assert_uint_eq(new_val[2], 11);	/* a */
	ck_assert_uint_eq(new_val[3], 22);	/* b */
	ck_assert_int_eq(c.carried, 3);
	ck_assert_int_eq(c.fresh, 1);
	ck_assert_int_eq(c.dropped, 1);
	/* b grown to 16 bytes in the new build: not carried, not half read */
	to.v[3].size = 16;
	to.size += 8;
	{
		uint64_t wide[5] = { 0, 0, 0, 5, 6 };

		bss_layout_carry(&from, old_val, &to, wide, &c);
		ck_assert_uint_eq(wide[3], 5);
		ck_assert_uint_eq(wide[4], 6);
		ck_assert_int_eq(c.carried, 2);
		ck_assert_int_eq(c.dropped, 2);
	}
	bss_layout_free(&to);
	/* not a DATASEC, or a variable past the section's end: refused */
	ck_assert_int_eq(bss_layout_from_btf(ob, 1, &to), -EINVAL);
	{
		int var = btf__add_var(nb, "past", BTF_VAR_GLOBAL_ALLOCATED, 1);
		int sec = btf__add_datasec(nb, ".bss", 8);

		ck_assert_int_eq(btf__add_datasec_var_info(nb, var, 4, 8), 0);
		ck_assert_int_eq(bss_layout_from_btf(nb, sec, &to), -EINVAL);
	}
	bss_layout_free(&from);
	btf__free(ob);
	btf__free(nb);
}
END_TEST

/* Static variables of two units may share a name: neither is carried. */
START_TEST(test_carry_twice_named)
{
	static const char *const old_names[] = { "x", "x", "y", NULL };
	static const char *const new_names[] = { "y", "x", "x", NULL };
	struct btf *ob = btf__new_empty(), *nb = btf__new_empty();
	struct bss_layout from, to;
	struct bss_carry c;
	uint64_t old_val[3] = { 1, 2, 3 }, new_val[3] = { 0, 0, 0 };

	ck_assert_int_eq(bss_layout_from_btf(ob, datasec_of(ob, old_names), &from), 0);
	ck_assert_int_eq(bss_layout_from_btf(nb, datasec_of(nb, new_names), &to), 0);
	bss_layout_carry(&from, old_val, &to, new_val, &c);
	ck_assert_uint_eq(new_val[0], 3);
	ck_assert_uint_eq(new_val[1], 0);
	ck_assert_uint_eq(new_val[2], 0);
	ck_assert_int_eq(c.carried, 1);
	bss_layout_free(&from);
	bss_layout_free(&to);
	btf__free(ob);
	btf__free(nb);
}
END_TEST

Suite *bss_layout_suite(void)
{
	Suite *s = suite_create("bss_layout");
	TCase *tc = tcase_create("layout");

	tcase_add_test(tc, test_object_layout_is_the_skeleton);
	tcase_add_test(tc, test_carry_by_name);
	tcase_add_test(tc, test_carry_twice_named);
	suite_add_tcase(s, tc);
	return s;
}
