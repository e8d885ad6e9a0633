// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
/* fill.c - struct metrics from each source of the kernel's figures (fill.h). */
#include "fill.h"
#include "util.h"

#pragma GCC poison u8 u16 u32 u64 s8 s16 s32 s64

/* An mm's stocks from its counters in pages: mm->rss_stat, locked_vm, pinned_vm. */
static void mm_stocks(struct metrics *m, uint64_t anon, uint64_t file, uint64_t shmem,
		      uint64_t locked_vm, uint64_t pinned_vm, uint64_t page_size)
{
	m->anon = anon * page_size;
	m->file = file * page_size;
	m->shmem = shmem * page_size;
	m->rss = m->anon + m->file + m->shmem;
	m->mlocked = locked_vm * page_size;
	m->pinned_vm = pinned_vm * page_size;
}

void metrics_from_bpf_flows(struct metrics *m, const struct memacct_flows *f, uint64_t page_size)
{
	const __u64 *w = (const __u64 *)f;

	for (int id = 0; id < M_NR; id++) {
		const struct metric_def *d = &metric_table[id];
		uint64_t v = 0;

		if (!metric_is_bpf_flow(id))
			continue;
		for (int i = 0; i < d->flow_words; i++)
			v += w[d->flow_word + i];
		*metric_ptr(m, id) = d->flags & MF_BYTES ? v * page_size : v;
	}
	for (int i = 0; i < MEMACCT_MR_NR; i++)
		m->numa_migrated_by_reason[i] = f->numa_migrated_pages[i] * page_size;
	for (int i = 0; i < MEMACCT_COW_KIND_NR; i++)
		m->cow_by_kind[i] = f->cow_kind_pages[i] * page_size;
}

void metrics_from_proc_record(struct metrics *m, const struct memacct_proc *p,
			      uint64_t page_size)
{
	metrics_from_bpf_flows(m, &p->f, page_size);
	m->mlocked_peak = p->pin.locked_vm_peak_pages * page_size;
	m->pinned_vm_peak = p->pin.pinned_vm_peak_pages * page_size;
	m->pinned_peak = p->pin.pinned_peak_pages * page_size;
	m->dma_pinned = p->pin.dma_pinned_pages * page_size;
	m->dma_pinned_peak = p->pin.dma_pinned_peak_pages * page_size;
	m->dma_estimate = p->pin.dma_flags & MEMACCT_DMA_ESTIMATE;
}

void metrics_from_exit_record(struct metrics *m, const struct memacct_proc *p,
			      uint64_t page_size)
{
	mm_stocks(m, p->exit_rss_anon_pages, p->exit_rss_file_pages, p->exit_rss_shmem_pages,
		  p->pin.locked_vm_pages, p->pin.pinned_vm_pages, page_size);
	/* before 6.16 sched_process_exit fired after exit_mm() (kernel
	 * commit "exit: move and extend sched_process_exit() tracepoint"
	 * moved it before): no mm, the RSS at exit is unknown, not 0 */
	if (!(p->flags & MEMACCT_PROC_EXIT_MM))
		m->unknown |= MBIT(M_RSS) | MBIT(M_ANON) | MBIT(M_FILE) | MBIT(M_SHMEM);
	m->rss_peak = max_u64(p->exit_maxrss_pages * page_size, m->rss);
	/* RSS PEAK is the exiting image's (VmHWM's meaning, as live). Without
	 * the mm only signal->maxrss is left, which holds the images before
	 * an exec too: it is this image's peak only if it grew past the
	 * value it had at the exec */
	if (!(p->flags & MEMACCT_PROC_EXIT_MM) && (p->flags & MEMACCT_PROC_EXECED) &&
	    p->exit_maxrss_pages <= p->exec_maxrss_pages)
		m->unknown |= MBIT(M_RSS_PEAK);
	m->page_faults = p->exit_min_flt + p->exit_maj_flt;
	m->major_faults = p->exit_maj_flt;
}

void metrics_from_task_stock(struct metrics *m, const struct memacct_task_stock *t,
			     uint64_t page_size)
{
	mm_stocks(m, t->rss_anon_pages, t->rss_file_pages, t->rss_shmem_pages,
		  t->locked_vm_pages, t->pinned_vm_pages, page_size);
	m->rss_peak = max_u64(t->hiwater_rss_pages * page_size, m->rss);
	m->page_faults = t->min_flt + t->maj_flt;
	m->major_faults = t->maj_flt;
}

void metrics_from_proc_status(struct metrics *m, const struct proc_status *st)
{
	m->rss = st->rss;
	m->anon = st->rss_anon;
	m->file = st->rss_file;
	m->shmem = st->rss_shmem;
	m->rss_peak = max_u64(st->hwm, st->rss);
	m->mlocked = st->locked;
	m->pinned_vm = st->pinned;
}

void metrics_from_oom_event(struct metrics *m, const struct memacct_oom_event *ev,
			    uint64_t page_size)
{
	if (ev->flags & MEMACCT_OOM_MM)
		mm_stocks(m, ev->rss_anon_pages, ev->rss_file_pages, ev->rss_shmem_pages,
			  ev->locked_vm_pages, ev->pinned_vm_pages, page_size);
	if (ev->flags & MEMACCT_OOM_FLOWS) {
		metrics_from_bpf_flows(m, &ev->f, page_size);
		m->dma_pinned = ev->pin.dma_pinned_pages * page_size;
		m->dma_estimate = ev->pin.dma_flags & MEMACCT_DMA_ESTIMATE;
	}
	metrics_pinned_sum(m);
}

void metrics_from_memcg_stat(struct metrics *m, const struct memcg_stat *st)
{
	m->usage = st->usage;
	m->rss = st->usage;
	m->anon = st->anon;
	m->file = st->file;
	m->shmem = st->shmem;
	m->reclaimable = memcg_reclaimable(st);
	m->working_set = memcg_working_set(st);
}

void metrics_from_memcg_events(struct metrics *m, const struct memcg_stat *st,
			       const struct memcg_stat *base)
{
	m->page_faults = st->pgfault - (base ? base->pgfault : 0);
	m->major_faults = st->pgmajfault - (base ? base->pgmajfault : 0);
	if (st->has_oom_kill)
		m->oom_kills = max_u64(m->oom_kills, st->oom_kill - (base ? base->oom_kill : 0));
}

void metrics_add_cgroup_pins(struct metrics *m, const struct memacct_pinned *pin,
			     uint64_t page_size)
{
	m->mlocked_peak += pin->locked_vm_peak_pages * page_size;
	m->pinned_vm_peak += pin->pinned_vm_peak_pages * page_size;
	m->pinned_peak += pin->pinned_peak_pages * page_size;
	m->dma_pinned += pin->dma_pinned_pages * page_size;
	m->dma_pinned_peak += pin->dma_pinned_peak_pages * page_size;
	m->dma_estimate |= pin->dma_flags & MEMACCT_DMA_ESTIMATE;
}

void metrics_dma_net(struct metrics *m, uint64_t locked)
{
	m->dma_pinned -= locked < m->dma_pinned ? locked : m->dma_pinned;
	m->dma_pinned_peak -= locked < m->dma_pinned_peak ? locked : m->dma_pinned_peak;
}

void metrics_pinned_sum(struct metrics *m)
{
	m->pinned = m->mlocked + m->pinned_vm + m->dma_pinned;
}

void metrics_pinned_totals(struct metrics *m)
{
	metrics_pinned_sum(m);
	m->mlocked_peak = max_u64(m->mlocked_peak, m->mlocked);
	m->pinned_vm_peak = max_u64(m->pinned_vm_peak, m->pinned_vm);
	m->dma_pinned_peak = max_u64(m->dma_pinned_peak, m->dma_pinned);
	m->pinned_peak = max_u64(max_u64(m->pinned_peak, m->pinned), m->dma_pinned_peak);
}
