"""The estimate's warnings, and why a lever does not apply, as message codes with values, written in English and
Simplified Chinese.

A warning is made once, in the engine, as ``Message(code, **values)``: a ``str`` (its English sentence, what
``Estimate.warnings``, the JSON and the command line show) that keeps its code and values, so that the app, the
levers and the workbook can write it again in the reader's language and currency with :func:`render`. Every
code has both languages here; ``tests/test_messages_zh.py`` fails when one lacks a language or a placeholder.

In a template, a value named ``*_usd`` is an amount [USD] written in the display currency; ``{x!p}`` writes a
quantity without an exponent (``2 万亿``); ``{x!w}`` a word of :data:`WORDS` in the reader's language; a value that
is itself a :class:`Message` (or a list of them) is written in the same language.
"""
from __future__ import annotations

import string

from .numbers import money, plain

#: code -> (English, Chinese). English keeps a field's id (``pricing=spot``): the app shows its label.
WARNINGS = {
    "ew_cluster_capped": (
        "finishing pre-training in {target_days!p} days needs {wanted:,.0f} GPUs, more than the {most:,.0f} the n_gpus "
        "field allows; sized at {n_gpus:,.0f} GPUs, pre-training takes {wall_days:,.1f} days",
        "在 {target_days!p} 天内完成预训练需要 {wanted:,.0f} 块 GPU，超过 GPU 数量字段允许的 {most:,.0f} 块；"
        "按 {n_gpus:,.0f} 块配置，预训练需 {wall_days:,.1f} 天"),
    "ew_layout": (
        "TP {tp:.0f} x PP {pp:.0f} x DP {dp:,.0f}, ZeRO-{zero:.0f}, micro-batch {micro_batch:.0f}",
        "TP {tp:.0f} × PP {pp:.0f} × DP {dp:,.0f}，ZeRO-{zero:.0f}，微批 {micro_batch:.0f}"),
    "ew_memory": (
        "the model does not fit in memory with {layout}: {need_gib:,.1f} GiB per GPU of {gpu}'s {memory_gib:,.0f} GiB "
        "(usable {usable:g}); {fixes} (the totals assume it fits)",
        "模型在 {layout} 下显存放不下：每块 GPU 需要 {need_gib:,.1f} GiB，{gpu} 有 {memory_gib:,.0f} GiB（可用比例 {usable:g}）；"
        "{fixes}（总额按能放下计算）"),
    "ew_fix_layout": (
        "tensor_parallel={tp:.0f}, pipeline_parallel={pp:.0f}, zero_stage={zero:.0f}, micro_batch_size={micro_batch:.0f} "
        "fits on these {n_gpus:,.0f} GPUs",
        "张量并行 {tp:.0f}、流水线并行 {pp:.0f}、ZeRO 阶段 {zero:.0f}、微批大小 {micro_batch:.0f} 可放进这 {n_gpus:,.0f} 块 GPU"),
    "ew_fix_gpus": (
        "n_gpus of at least {min_gpus:,.0f} fits with the layout settings typed",
        "按所填并行设置，GPU 数量至少 {min_gpus:,.0f} 块才能放下"),
    "ew_fix_none": (
        "no layout fits at any GPU count with recompute={recompute!r}: use full recompute, a shorter sequence or "
        "micro-batch, or a GPU with more memory",
        "recompute={recompute} 时，任何 GPU 数量都没有能放下的并行布局：请使用完全重计算、更短的序列或微批，或显存更大的 GPU"),
    "ew_global_batch": (
        "the layout runs a global batch of {used:,.0f} tokens, more than the {planned:,.0f} planned: {dp:,.0f} "
        "data-parallel replicas need a micro-batch each; use fewer GPUs, more tensor or pipeline parallelism, or a "
        "larger global_batch_tokens",
        "该并行布局的全局批大小为 {used!p} token，超过计划的 {planned!p}：{dp:,.0f} 个数据并行副本各需一个微批；"
        "请减少 GPU、增加张量或流水线并行，或增大全局批大小"),
    "ew_mfu_scaled": (
        "the MFU of {gpu} is extrapolated: {reference} x {speedup:.2f} per GPU ({benchmark}): no published training "
        "run of its generation is on record; type a measured mfu when you have one",
        "{gpu} 的 MFU 为外推值：按 {reference} 的水平乘以每 GPU 实测加速比 {speedup:.2f}（{benchmark}）；该代 GPU 没有"
        "公开的训练记录；有实测值时请填写 MFU"),
    "ew_mfu_reference": (
        "the MFU of {gpu} is extrapolated: the share of peak of {reference} (no published run, no measured "
        "speed-up): no published training run of its generation is on record; type a measured mfu when you have one",
        "{gpu} 的 MFU 为外推值：取 {reference} 达到的峰值比例（没有公开训练记录，也没有实测加速比）；有实测值时请填写 MFU"),
    "ew_idle_gpus": (
        "n_gpus={n_gpus:.0f} is not a multiple of tensor_parallel x pipeline_parallel = {group:.0f}: {idle:,.0f} GPUs "
        "have no data-parallel replica and stay idle",
        "GPU 数量 {n_gpus:.0f} 不是张量并行 × 流水线并行（{group:.0f}）的整数倍：{idle:,.0f} 块 GPU 没有数据并行副本而闲置"),
    "ew_serving_no_fit": (
        "serving: the weights ({weights_gb:,.0f} GB in {precision}) and one request's KV cache do not fit in the "
        "replica{given}; give more GPUs per replica, a lower weight or KV-cache precision, or shorter requests",
        "推理：权重（{precision} 下 {weights_gb:,.0f} GB）加一个请求的 KV 缓存放不进一个副本{given}；请给每个副本更多 GPU、"
        "降低权重或 KV 缓存精度，或缩短请求"),
    "ew_serving_given": (" of serving_tensor_parallel={tp} GPUs", "（每副本 {tp} 块 GPU）"),
    "ew_serving_slow": (
        "serving: no replica size meets the time per output token of {tpot_target:g} ms{ttft}; the fastest replica "
        "({replica_gpus:.0f} GPUs) takes {tpot:.1f} ms per token and {ttft_s:.2f} s to the first token",
        "推理：没有哪种副本规模能达到每个输出 token {tpot_target:g} 毫秒的目标{ttft}；最快的副本（{replica_gpus:.0f} 块 GPU）"
        "每个 token 需 {tpot:.1f} 毫秒，首 token 需 {ttft_s:.2f} 秒"),
    "ew_serving_ttft": (" and time to first token {ttft_target:g} s", "及首 token {ttft_target:g} 秒的目标"),
    "ew_multi_node": (
        "serving: a replica of {replica_gpus:,.0f} GPUs spans {nodes:,.0f} nodes; tensor-parallel communication "
        "between nodes is not modelled, so its latency and cost are optimistic",
        "推理：一个副本的 {replica_gpus:,.0f} 块 GPU 跨越 {nodes:,.0f} 个节点；节点间的张量并行通信未建模，延迟和成本偏乐观"),
    "ew_list_price_cluster": (
        "{gpus:,.0f} GPUs priced {mode!m} at a list price: clouds seldom sell a training cluster this size that way; "
        "such clusters are reserved or negotiated (pricing reserved_1y, or a quoted price_per_gpu_hour)",
        "{gpus:,.0f} 块 GPU 按“{mode!m}”目录价计：云厂商很少这样出售这么大的训练集群；此类集群通常包年或议价"
        "（计费方式选包年，或填写报价的每 GPU 小时价格）"),
    "ew_list_price_cluster_quote": (
        "{gpus:,.0f} GPUs priced {mode!m} at a list price: clouds seldom sell a training cluster this size that way; "
        "such clusters are reserved or negotiated, and no reservation price is on record for this GPU and provider: "
        "type the price you are quoted (price_per_gpu_hour)",
        "{gpus:,.0f} 块 GPU 按“{mode!m}”目录价计：云厂商很少这样出售这么大的训练集群；此类集群通常包年或议价，"
        "而该 GPU 在此供应商没有包年价格记录：请填写报价的每 GPU 小时价格"),
    "ew_over_budget": (
        "the plan's total of {total_usd} is over the budget of {budget_usd} by {over_usd} ({share:.0%})",
        "方案总额 {total_usd} 超出预算 {budget_usd}，超支 {over_usd}（{share:.0%}）"),
    "ew_smaller_than_optimal": (
        "{params:.3g} parameters on {tokens:.3g} tokens ({per_param!p} tokens/parameter) is {factor:.1f}x smaller "
        "than compute-optimal for the same FLOPs ({params_optimal:.3g} parameters on {tokens_optimal:.3g} tokens, "
        "{law}); over-training a smaller model is a deliberate choice when inference cost matters.",
        "{params!p} 参数训练 {tokens!p} token（每参数 {per_param!p} 个 token），比同等算力下的算力最优规模小 {factor:.1f} 倍"
        "（最优为 {params_optimal!p} 参数、{tokens_optimal!p} token，{law!w}）；若推理成本重要，有意训练更小的模型是合理选择。"),
    "ew_larger_than_optimal": (
        "{params:.3g} parameters on {tokens:.3g} tokens ({per_param!p} tokens/parameter) is {factor:.1f}x larger "
        "than compute-optimal for the same FLOPs ({params_optimal:.3g} parameters on {tokens_optimal:.3g} tokens, "
        "{law}); the same loss is cheaper with fewer parameters and more tokens.",
        "{params!p} 参数训练 {tokens!p} token（每参数 {per_param!p} 个 token），比同等算力下的算力最优规模大 {factor:.1f} 倍"
        "（最优为 {params_optimal!p} 参数、{tokens_optimal!p} token，{law!w}）；用更少参数、更多 token 达到同样损失更便宜。"),
    "ew_checkpoint_slow": (
        "pfs_throughput_gb_per_s={throughput:.3g}: a checkpoint takes {write_s:,.0f} s to write, longer than the "
        "cluster's {mtbf_s:,.0f} s between failures: the run would rarely finish one and the price assumes it does; "
        "buy more throughput, more GPUs' write rate or fewer failures",
        "文件系统吞吐 {throughput:.3g} GB/s：写一个检查点需 {write_s:,.0f} 秒，长于集群两次故障之间的 {mtbf_s:,.0f} 秒："
        "训练几乎写不完一个检查点，而价格假设能写完；请购买更高吞吐、提高写入速率或减少故障"),
    "ew_checkpoint_drain": (
        "pfs_throughput_gb_per_s={throughput:.3g}: an asynchronous checkpoint takes {drain_min:,.1f} minutes to drain "
        "to the file system, longer than the {interval_min:,.1f}-minute interval: checkpoints would pile up in host "
        "memory; buy at least checkpoint bytes / interval",
        "文件系统吞吐 {throughput:.3g} GB/s：一个异步检查点需 {drain_min:,.1f} 分钟才能写入文件系统，长于 "
        "{interval_min:,.1f} 分钟的间隔：检查点会在主机内存中堆积；请至少购买“检查点大小 / 间隔”的吞吐"),
    "ew_short_team": (
        "staff_months is empty: the team of {fte:g} is paid only for the training stages' {months:.2g} months; a "
        "project team usually stays longer (data, evaluation, release): give staff_months the project's length",
        "人员月数留空：{fte:g} 人的团队只按训练阶段的 {months:.2g} 个月计薪；项目团队通常在岗更久（数据、评测、发布）："
        "请把人员月数设为项目周期"),
    "ew_serve_only_empty": (
        "plan_kind=serve_only with serving_months=0 costs nothing: give the months of serving",
        "计划类型为“只上线开源模型”而推理月数为 0，没有任何成本：请填写推理服务的月数"),
    "ew_contingency_low": (
        "redundancy_factor={value:g} is below the {least:g} the planning guides keep as the least contingency ({source})",
        "应急预留系数 {value:g} 低于规划指南建议的最低值 {least:g}"),
    "ew_interval_long": (
        "checkpoint_interval_hours={interval:g} is {ratio:.2g}x the Young/Daly optimum of {optimum:.2g} h for this "
        "cluster: more work lost on each interruption, about {extra_gpu_hours:,.0f} GPU-h ({extra_usd} of GPU time) "
        "more in pre-training than at the optimum ({source})",
        "检查点间隔 {interval:g} 小时是该集群 Young/Daly 最优值 {optimum:.2g} 小时的 {ratio:.2g} 倍：每次中断损失更多工作，"
        "预训练比最优多约 {extra_gpu_hours:,.0f} GPU 小时（{extra_usd} 的 GPU 时间）"),
    "ew_interval_short": (
        "checkpoint_interval_hours={interval:g} is {ratio:.2g}x the Young/Daly optimum of {optimum:.2g} h for this "
        "cluster: more time writing, about {extra_gpu_hours:,.0f} GPU-h ({extra_usd} of GPU time) more in "
        "pre-training than at the optimum ({source})",
        "检查点间隔 {interval:g} 小时是该集群 Young/Daly 最优值 {optimum:.2g} 小时的 {ratio:.2g} 倍：写检查点的时间更多，"
        "预训练比最优多约 {extra_gpu_hours:,.0f} GPU 小时（{extra_usd} 的 GPU 时间）"),
    "ew_divergence": (
        "precision={precision} without a divergence allowance: a divergence restart is expected with probability "
        "{probability:.0%} over {tokens:.3g} tokens, about {gpu_hours:,.0f} GPU-h ({cost_usd} of GPU time); set "
        "divergence_allowance=expected to carry it ({source})",
        "精度 {precision} 未计入发散余量：在 {tokens!p} token 上预计以 {probability:.0%} 的概率发生一次发散重启，约 "
        "{gpu_hours:,.0f} GPU 小时（{cost_usd} 的 GPU 时间）；请将发散余量设为“计入期望重启成本”"),
    "ew_reserved_idle": (
        "{field}={value}: {group!w} uses its {gpus:,.0f} committed GPUs {days:,.1f} days of the commitment's "
        "{term_days:,.0f}: {idle_gpu_hours:,.0f} GPU-h ({idle_usd} of GPU time) paid idle unless other work fills "
        "them ({source})",
        "{field}={value}：{group!w}仅在承诺期 {term_days:,.0f} 天中的 {days:,.1f} 天使用其 {gpus:,.0f} 块预留或包月 GPU："
        "{idle_gpu_hours:,.0f} GPU 小时（{idle_usd} 的 GPU 时间）闲置付费，除非有其他工作使用"),
    "ew_spot_reclaims": (
        "pricing=spot for pre-training on {n_gpus:,.0f} GPUs over {days:,.1f} days: about {reclaims:,.0f} reclaims "
        "stop the whole job, losing {lost_gpu_hours:,.0f} GPU-h ({share:.1%} of the run, {lost_usd} of GPU time) "
        "besides the wait for capacity to return ({source})",
        "预训练在 {n_gpus:,.0f} 块 GPU 上使用竞价实例 {days:,.1f} 天：约 {reclaims:,.0f} 次回收会中断整个作业，损失 "
        "{lost_gpu_hours:,.0f} GPU 小时（占本次训练 {share:.1%}，{lost_usd} 的 GPU 时间），另需等待容量恢复"),
    "ew_unserved": (
        "serving_headroom={headroom:g}: capacity below the traffic ({moment!w}): about {share:.1%} of requests "
        "({per_day:,.0f} a day) find no free replica and are dropped or queued ({source})",
        "推理余量 {headroom:g}：容量低于流量（{moment!w}）：约 {share:.1%} 的请求（每天 {per_day:,.0f} 次）找不到空闲副本而被"
        "丢弃或排队"),
    "ew_log_sampling": (
        "log_sampling_ratio={ratio:g} on {n_gpus:,.0f} GPUs: {unlogged:.0%} of the {failures:,.0f} failures expected "
        "lack the failing node's logs, adding about {idle_gpu_hours:,.0f} GPU-h ({idle_usd} of GPU time) of idle "
        "cluster while it is found ({source})",
        "日志采样比例 {ratio:g}，{n_gpus:,.0f} 块 GPU：预计 {failures:,.0f} 次故障中有 {unlogged:.0%} 缺少故障节点的日志，"
        "排查期间集群闲置约 {idle_gpu_hours:,.0f} GPU 小时（{idle_usd} 的 GPU 时间）"),
}

#: Why a lever does not apply to a plan (workbench.programmes.levers): code -> (English, Chinese).
WHY_NOT = {
    "wn_no_pretraining": ("the plan does not pre-train: this changes the pre-training run",
                          "本方案没有预训练：此措施只改变预训练"),
    "wn_self_hosted": ("the cluster is self-hosted", "集群为自建"),
    "wn_programme_terms": ("a programme's terms are its fleets'", "项目计划的租期由其集群（fleets）决定"),
    "wn_not_rented_term": ("the cluster is not rented for a term: it is bought {mode!m}",
                           "集群没有按期租用：以“{mode!m}”方式购买"),
    "wn_no_fewer_terms": ("no larger cluster tried (up to {gpus:,.0f} GPUs) finishes in fewer terms: efficiency falls "
                          "as it grows", "更大的集群（最多试到 {gpus:,.0f} 块 GPU）也无法在更少的租期内完成：规模越大效率越低"),
    "wn_one_term": ("the run already fits in one term ({mode!m})", "训练已在一个租期内完成（{mode!m}）"),
    "wn_spot_already": ("pricing is already spot", "已在使用竞价实例"),
    "wn_not_on_demand": ("the cluster is bought {mode!m}, not on demand", "集群以“{mode!m}”方式购买，不是按需"),
    "wn_serving_reserved": ("serving is already reserved", "推理已使用预留容量"),
    "wn_no_fp8_peak": ("{gpu} has no fp8 peak in the catalog", "目录中没有 {gpu} 的 fp8 峰值算力"),
    "wn_fp8_already": ("precision is already fp8", "已使用 fp8 精度"),
    "wn_no_serving": ("no serving horizon (the plan serves for 0 months)", "没有推理服务期（推理月数为 0）"),
    "wn_autoscales": ("serving already autoscales", "推理已自动扩缩"),
    "wn_weights_low": ("weights are already below 16 bits", "权重已低于 16 位"),
    "wn_no_fp8": ("{gpu} has no fp8", "{gpu} 不支持 fp8"),
    "wn_prefix_cache": ("prefix caching is already at 30 % or more", "前缀缓存命中率已达 30% 或以上"),
    "wn_interval_optimum": ("the interval is already the Young/Daly optimum (Checkpoint interval left empty)",
                            "检查点间隔已是 Young/Daly 最优值（检查点间隔留空）"),
    "wn_no_region": ("no region is chosen: the plan already pays its provider's cheapest region",
                     "未选择地域：方案已按该供应商最便宜的地域计价"),
    "wn_cheapest_region": ("{region} is already {provider}'s cheapest region for {gpu} on record in its country "
                           "(the lever does not move data across a border)",
                           "{region} 已是 {provider} 在同一国家内有记录的 {gpu} 最便宜地域（此措施不会把数据移出境外）"),
    "wn_price_typed": ("a price per GPU-hour is typed: the catalogue's prices of other modes do not compare with it",
                       "已填写每 GPU 小时价格：目录中其他计费方式的价格无法与之比较"),
    "wn_no_experiments": ("no trial-and-error or ablation runs are planned", "没有计划试错或消融实验"),
    "wn_experiments_spot": ("experiments are already on spot", "实验已使用竞价实例"),
    "wn_logs_sampled": ("logs are already sampled at 10 % or less and kept 30 days or less",
                        "日志已按 10% 或更低抽样并保留 30 天或更短"),
    "wn_at_mean": ("capacity is already at or below the mean traffic", "容量已等于或低于平均流量"),
    "wn_no_preference": ("no human preference comparisons are planned", "没有计划人工偏好比较"),
    "wn_not_committed": ("the cluster is not committed: it is bought {mode!m}", "集群没有承诺购买：以“{mode!m}”方式购买"),
    "wn_no_full_sft": ("no SFT, or it already trains 1 % of the parameters or fewer", "没有 SFT，或已只训练 1% 或更少的参数"),
    "wn_few_checkpoints": ("checkpoints kept are already at 1 hot and 3 in object storage or fewer",
                           "保留的检查点已是热存储 1 个、对象存储 3 个或更少"),
    "wn_nothing_saved": ("saves nothing here: no cost of this plan changes with it",
                         "此处不节省：方案中没有随它变化的成本"),
    "wn_adds": ("adds {cost_usd} here: it brings more than it removes", "此处反而增加 {cost_usd}：带来的成本多于节省"),
    "wn_delay": ("its {hours:,.1f} hours of delay cost {cost_usd} at delay_cost_usd_per_day, more than it saves",
                 "其 {hours:,.1f} 小时的延误按每天延误成本计为 {cost_usd}，超过其节省"),
    "wn_releases_fast": ("every workstream already releases within 15 minutes", "每条工作流已在 15 分钟内释放"),
    "wn_no_fleets": ("no reserved or owned GPUs in the plan", "方案中没有预留或自有的 GPU"),
}

#: Every message: the warnings and the reasons a lever does not apply.
MESSAGES = {**WARNINGS, **WHY_NOT}

#: Words a template takes with ``!w``: (English, Chinese).
WORDS = {
    "pretrain": ("pretrain", "预训练"), "post_training": ("post training", "后训练"),
    "serving_base": ("serving base", "推理基础容量"), "experiments": ("experiments", "实验"),
    "each_moment": ("at each moment", "每个时刻"), "daily_peak": ("at the daily peak", "每日峰值"),
    "besiroglu2024": ("besiroglu2024", "Besiroglu 等 2024"), "hoffmann2022": ("hoffmann2022", "Hoffmann 等 2022"),
}


class Message(str):
    """A message: its English sentence (the ``str``), its ``code`` in :data:`MESSAGES` and its ``values``."""

    def __new__(cls, code: str, **values):
        self = super().__new__(cls, render(code, values))
        self.code, self.values = code, values
        return self

    def __reduce__(self):  # pickled (the app's cache, a worker) as what it is, not as its English text
        return (_message, (self.code, self.values))

    def text(self, lang: str = "en", currency: str = "USD", rate: float = 1.0) -> str:
        """The sentence for a reader of ``lang``, amounts in ``currency`` at ``rate`` [currency/USD]."""
        return render(self.code, self.values, lang, currency, rate)


class Refusal(str):
    """Why a variant of a plan was refused: the error's English text (the ``str``), written again in the reader's
    language by the error itself where it can (``ScenarioError.message``)."""

    def __new__(cls, error: Exception):
        self = super().__new__(cls, str(error))
        self.error = error
        return self

    def __reduce__(self):  # pickled as its text: an error's state is not worth carrying
        return (str, (str(self),))

    def text(self, lang: str = "en", currency: str = "USD", rate: float = 1.0) -> str:
        message = getattr(self.error, "message", None)
        if callable(message):
            try:
                return message(lang, reader=True)
            except TypeError:
                return message(lang)
        return str(self)


def _message(code, values):
    return Message(code, **values)


class _Formatter(string.Formatter):
    def __init__(self, lang: str):
        super().__init__()
        self.lang = lang

    def convert_field(self, value, conversion):
        if conversion == "p":
            return plain(float(value), self.lang)
        if conversion == "m":  # a pricing mode, as the pricing field's menu says it
            from .i18n import choice_label
            return choice_label("pricing", value, self.lang)
        if conversion == "w":
            pair = WORDS.get(value)
            return value if pair is None else pair[self.lang == "zh"]
        return super().convert_field(value, conversion)


def render(code: str, values: dict, lang: str = "en", currency: str = "USD", rate: float = 1.0) -> str:
    """Message ``code`` with ``values`` for a reader of ``lang`` (see the module docstring)."""
    template = MESSAGES[code][1 if lang == "zh" else 0]

    def shown(name, value):
        if isinstance(value, Message):
            return value.text(lang, currency, rate)
        if isinstance(value, (list, tuple)):
            return ("；" if lang == "zh" else "; ").join(shown(name, v) for v in value)
        if name.endswith("_usd"):
            return money(float(value) * rate, currency, lang)
        return value

    return _Formatter(lang).format(template, **{k: shown(k, v) for k, v in values.items()})
