/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * bss_layout.h - the layout of a BPF object's .bss (each variable's name,
 * offset and size, read from BTF), so that a daemon started on the pins of
 * another build sees that the pinned .bss is laid out differently and
 * carries its values across by name (user/kernel/pin.c). A size check alone
 * missed a reordering: a link-order change, a variable moved between BPF
 * units (issue 40), two variables of one size swapped.
 */
#ifndef MEMACCT_BSS_LAYOUT_H
#define MEMACCT_BSS_LAYOUT_H
#include <stdbool.h>
#include <stdint.h>

struct btf;
struct bpf_object;

struct bss_var {
	char name[64];
	uint32_t off, size;	/* bytes */
};

struct bss_layout {
	struct bss_var *v;	/* by offset, as the DATASEC lists them */
	int n;
	uint32_t size;		/* the section's bytes */
};

/* What bss_layout_carry() did, in variables. */
struct bss_carry {
	int carried;	/* same name and size in both: value copied */
	int fresh;	/* only in the new layout: its initial value kept */
	int dropped;	/* only in the old one, or of another size: lost */
};

/*
 * bss_layout_from_btf() - the variables of the DATASEC @datasec_id of @btf.
 * @out is allocated (bss_layout_free()). 0, -EINVAL (not a DATASEC, or a
 * variable past its end) or -ENOMEM.
 */
int bss_layout_from_btf(const struct btf *btf, uint32_t datasec_id, struct bss_layout *out);

/*
 * bss_layout_of_map() - the layout of the global-data map @map_fd (a pinned
 * .bss), from the BTF the kernel keeps with it (bpf_map_info.btf_id and
 * btf_value_type_id). -ENODATA when the map has no BTF, else as above or
 * the negative errno of a failed read.
 */
int bss_layout_of_map(int map_fd, struct bss_layout *out);

/*
 * bss_layout_of_object() - the layout of the ".bss" of the opened (not
 * necessarily loaded) @obj, from its BTF. -ENOENT when it has none.
 */
int bss_layout_of_object(const struct bpf_object *obj, struct bss_layout *out);

/* Same variables, at the same offsets, of the same sizes, in a section of
 * the same size. */
bool bss_layout_equal(const struct bss_layout *a, const struct bss_layout *b);

/*
 * bss_layout_carry() - each variable of @to (in @new_val, @to->size bytes)
 * that @from has under the same name and of the same size takes its value
 * from @old_val (@from->size bytes); the others keep what @new_val holds.
 * A name that either layout holds twice (static variables of two units) is
 * not carried: which one is which cannot be told. Counts in @c.
 */
void bss_layout_carry(const struct bss_layout *from, const void *old_val,
		      const struct bss_layout *to, void *new_val, struct bss_carry *c);

void bss_layout_free(struct bss_layout *l);

#endif /* MEMACCT_BSS_LAYOUT_H */
