// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* bss_layout.c - a .bss layout from BTF, compared and carried (bss_layout.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bss_layout.h"

int bss_layout_from_btf(const struct btf *btf, uint32_t datasec_id, struct bss_layout *out)
{
	const struct btf_type *t = btf__type_by_id(btf, datasec_id);
	const struct btf_var_secinfo *vs;
	int n;

	memset(out, 0, sizeof(*out));
	if (!t || !btf_is_datasec(t))
		return -EINVAL;
	n = btf_vlen(t);
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	out->size = t->size;
	vs = btf_var_secinfos(t);
	for (int i = 0; i < n; i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);
		const char *name = var ? btf__name_by_offset(btf, var->name_off) : NULL;

		if ((uint64_t)vs->offset + vs->size > t->size) {
			bss_layout_free(out);
			return -EINVAL;
		}
		snprintf(out->v[i].name, sizeof(out->v[i].name), "%s", name ? name : "");
		out->v[i].off = vs->offset;
		out->v[i].size = vs->size;
	}
	out->n = n;
	return 0;
}

int bss_layout_of_map(int map_fd, struct bss_layout *out)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	struct btf *btf;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	if (!info.btf_id || !info.btf_value_type_id)
		return -ENODATA;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		return -errno;
	err = bss_layout_from_btf(btf, info.btf_value_type_id, out);
	btf__free(btf);
	return err;
}

int bss_layout_of_object(const struct bpf_object *obj, struct bss_layout *out)
{
	struct btf *btf = bpf_object__btf(obj);
	int id;

	memset(out, 0, sizeof(*out));
	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, ".bss", BTF_KIND_DATASEC);
	if (id < 0)
		return -ENOENT;
	return bss_layout_from_btf(btf, id, out);
}

bool bss_layout_equal(const struct bss_layout *a, const struct bss_layout *b)
{
	if (a->n != b->n || a->size != b->size)
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->v[i].off != b->v[i].off || a->v[i].size != b->v[i].size ||
		    strcmp(a->v[i].name, b->v[i].name))
			return false;
	return true;
}

/* The one variable of @l named @name: its index, -1 when none, -2 when two. */
static int var_named(const struct bss_layout *l, const char *name)
{
	int found = -1;

	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name)) {
			if (found >= 0)
				return -2;
			found = i;
		}
	return found;
}

void bss_layout_carry(const struct bss_layout *from, const void *old_val,
		      const struct bss_layout *to, void *new_val, struct bss_carry *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < to->n; i++) {
		const struct bss_var *nv = &to->v[i];
		int j = nv->name[0] && var_named(to, nv->name) == i ? var_named(from, nv->name) : -2;

		if (j == -1) {
			c->fresh++;
			continue;
		}
		if (j < 0 || from->v[j].size != nv->size) {
			c->dropped++;
			continue;
		}
		memcpy((char *)new_val + nv->off, (const char *)old_val + from->v[j].off, nv->size);
		c->carried++;
	}
	/* the old variables no new one took */
	for (int j = 0; j < from->n; j++)
		if (var_named(to, from->v[j].name) == -1)
			c->dropped++;
}

void bss_layout_free(struct bss_layout *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
