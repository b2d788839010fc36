"""User-facing words in English and Simplified Chinese (field labels and help live in
``data/scenario_fields.csv``; this table holds the rest: stages, categories, units, app text)."""
from __future__ import annotations

import html
import re
from functools import lru_cache

LANGUAGES = ("en", "zh")

TEXT = {
    # exports: a plan without a name, the GPU-hour classes of a programme's lines
    "plan_unnamed": ("Plan", "方案"), "gpu_class_productive": ("productive", "有效训练"), "gpu_class_lost": ("lost", "故障损失"),
    "gpu_class_debug": ("debug", "调试"), "gpu_class_experiments": ("experiments", "实验"),
    "gpu_class_serving": ("serving", "推理"), "gpu_class_none": ("none", "无"),
    # stages and groups
    "pretrain": ("Pre-training", "预训练"), "sft": ("SFT", "监督微调"), "preference": ("Preference tuning", "偏好对齐"),
    "evaluation": ("Evaluation", "评测"), "inference": ("Inference", "推理服务"), "finetune": ("Fine-tuning", "微调"),
    # categories
    "compute": ("Compute", "算力"), "storage": ("Storage", "存储"), "network": ("Network", "网络"),
    "annotation": ("Annotation", "标注"), "logging": ("Logging", "日志"), "staff": ("Staff", "人员"),
    "power": ("Power", "电力"), "failures": ("Failures", "故障"), "experiments": ("Experiments", "实验"),
    "redundancy": ("Contingency", "应急预留"), "fixed": ("fixed", "固定成本"), "elastic": ("elastic", "变动成本"),
    # units
    "parameters": ("parameters", "参数"), "tokens": ("tokens", "token"), "days": ("days", "天"), "GPUs": ("GPUs", "块 GPU"),
    "fraction": ("fraction", "比例"), "months": ("months", "月"), "hours": ("hours", "小时"), "minutes": ("minutes", "分钟"),
    "years": ("years", "年"), "epochs": ("epochs", "轮"), "examples": ("examples", "条"), "comparisons": ("comparisons", "次"),
    # field units
    "CNY/USD": ("CNY/USD", "元/美元"), "FTE": ("FTE", "人"), "FTE/1000 GPUs": ("FTE/1000 GPUs", "人/千块 GPU"),
    "GB/GPU-day": ("GB/GPU-day", "GB/GPU·天"), "GB/s per GPU": ("GB/s per GPU", "GB/s（每块 GPU）"),
    "GB/s per TiB": ("GB/s per TiB", "GB/s（每 TiB）"), "USD/FTE-month": ("USD/FTE-month", "USD/人月"),
    "USD/GB-month": ("USD/GB-month", "USD/GB·月"), "USD/GPU": ("USD/GPU", "USD/块 GPU"),
    "USD/GPU-h": ("USD/GPU-h", "USD/GPU 小时"), "USD/M tokens": ("USD/M tokens", "USD/百万 token"),
    "USD/comparison": ("USD/comparison", "USD/次比较"), "USD/day": ("USD/day", "USD/天"),
    "USD/example": ("USD/example", "USD/条"), "USD/hour": ("USD/hour", "USD/小时"),
    "USD/kW-month": ("USD/kW-month", "USD/kW·月"), "USD/kWh": ("USD/kWh", "USD/千瓦时"),
    "USD/rating": ("USD/rating", "USD/次评分"), "bytes/parameter": ("bytes/parameter", "字节/参数"),
    "bytes/token": ("bytes/token", "字节/token"), "checkpoints": ("checkpoints", "个检查点"), "copies": ("copies", "份"),
    "factor": ("factor", "倍"), "failures/GPU-day": ("failures/GPU-day", "次故障/GPU·天"),
    "fraction of GPU price": ("fraction of GPU price", "占 GPU 价格比例"),
    "fraction of main run": ("fraction of main run", "占主训练比例"), "fraction of purchase": ("fraction of purchase", "占购置价比例"),
    "fraction of the interval": ("fraction of the interval", "占间隔比例"), "heads": ("heads", "个头"),
    "interruptions/node-month": ("interruptions/node-month", "次中断/节点·月"), "ms": ("ms", "毫秒"),
    "multiple of demand": ("multiple of demand", "需求倍数"), "prompts": ("prompts", "条提示"), "ratings": ("ratings", "次评分"),
    "replicas": ("replicas", "个副本"), "requests/day": ("requests/day", "次请求/天"), "runs": ("runs", "次运行"),
    "s": ("s", "秒"), "samples": ("samples", "个样本"), "sequences": ("sequences", "条序列"),
    "tokens/s/GPU": ("tokens/s/GPU", "token/秒/GPU"),
    # app
    "title": ("LLM Cost Workbench", "大模型成本工作台"),
    "subtitle": ("What a training run costs, and why: every figure with its formula and source.",
                 "一次训练要花多少钱、为什么：每个数字都有公式和出处。"),
    "preset": ("Preset", "预设"), "language": ("Language", "语言"), "currency": ("Currency", "货币"),
    "advanced": ("Advanced", "高级设置"), "basic": ("Main inputs", "主要输入"), "auto": ("auto", "自动"),
    "auto_hint": ("empty = auto", "留空 = 自动"),
    "total_cost": ("Total cost", "总成本"), "gpu_hours": ("Pre-training GPU-hours", "预训练 GPU 小时"),
    "wall_days": ("Wall-clock", "工期"), "n_gpus": ("GPUs", "GPU 数量"),
    "finetune_gpu_hours": ("Fine-tuning GPU-hours (no pre-training)", "微调 GPU 小时（无预训练）"),
    "per_million": ("Pre-training cost per million tokens", "每百万训练 token 的预训练成本"),
    "serving": ("Serving (GPU cost)", "推理服务（GPU 成本）"),
    "per_million_in": ("per million input tokens", "每百万输入 token"),
    "per_million_out": ("per million output tokens", "每百万输出 token"),
    "blended": ("blended", "综合"), "per_request": ("per request", "每请求"),
    "replica": ("GPUs per replica", "每副本 GPU"), "batch": ("batch", "批大小"),
    "tpot": ("ms per output token", "毫秒/输出 token"), "serving_gpus": ("serving GPUs", "推理 GPU"),
    "serving_traffic": ("at {requests:,.0f} requests a day, peak {peak:g}x the average, {utilisation:.0%} of capacity used",
                        "按每天 {requests:,.0f} 个请求、峰值为均值的 {peak:g} 倍计，容量利用率 {utilisation:.0%}"),
    "serving_not_in_total": ("not in the total: the plan serves for 0 months (Advanced > Serving)",
                             "未计入总成本：推理月数为 0（高级设置 > 推理服务）"),
    "per_million_blended": ("per million tokens, input and output together", "每百万 token（输入输出合计）"),
    "serving_in_total": ("in the total for {months:g} months", "已计入总成本 {months:g} 个月"),
    "not_served": ("no serving figure for this plan (see the warnings)", "本方案无推理数据（见警告）"),
    "days_total": ("days for all training stages, failures included", "天（全部训练阶段，含故障）"),
    "chart_stage": ("Cost by stage and category", "各阶段、各类别成本"),
    "chart_tornado": ("Sensitivity: total cost at low / high input", "敏感性：输入取低 / 高值时的总成本"),
    "chart_split": ("Pre-training vs fine-tuning vs inference", "预训练、微调与推理的占比"),
    "chart_burn": ("Planned spend over time, with budget alert lines", "计划支出随时间变化及预算预警线"),
    "chart_size": ("Cost against model size at compute-optimal tokens", "计算最优 token 数下成本随模型规模的变化"),
    "chart_compare": ("Scenario A against B", "方案 A 与 B 对比"),
    "chart_range": ("Range of total cost (Monte Carlo over uncertain inputs)", "总成本区间（对不确定输入的蒙特卡洛模拟）"),
    "range": ("Likely range (P10–P90)", "成本区间（P10–P90）"), "main_costs": ("Where the money goes", "成本构成"),
    "gpu_price": ("GPU price", "GPU 价格"), "price_typed": ("typed by you", "您填写的价格"),
    "price_owned": ("owned: purchase spread over the useful life", "自建：购置费按使用年限分摊"),
    "offers_title": ("Where {gpu} can be had ({mode}), cheapest first", "{gpu} 的报价（{mode}），从低到高"),
    "provider_col": ("Provider", "供应商"), "region_col": ("Region", "地域"), "billed_col": ("Billed per GPU-h", "计费价/GPU 小时"),
    "shown_col": ("{currency} per GPU-h", "折合 {currency}/GPU 小时"), "as_of_col": ("As of", "日期"),
    "confidence_col": ("Confidence", "可信度"), "source_col": ("Source", "来源"),
    "cost": ("Cost", "成本"), "stage": ("Stage", "阶段"), "category": ("Category", "类别"), "share": ("Share", "占比"),
    "input": ("Input", "输入"), "low": ("low", "低"), "high": ("high", "高"), "change": ("Change in total", "总成本变化"),
    "day": ("Day", "天"), "spent": ("Spent", "已花费"), "budget_line": ("alert", "预警"), "model_size": ("Parameters", "参数量"),
    "this_plan": ("this plan", "当前方案"), "value": ("value", "取值"), "scenario": ("Scenario", "方案"),
    "lines": ("Cost lines, with formula and source", "成本明细（含公式与出处）"),
    "download_csv": ("Download cost lines (CSV)", "下载成本明细（CSV）"),
    "how_computed": ("formula and source", "公式与出处"),
    "budget_over": ("Over the budget by {amount}", "超出预算 {amount}"),
    "budget_within": ("Within the budget, {amount} left (the likely range reaches {high})",
                      "在预算内，剩余 {amount}（成本区间上限 {high}）"),
    "budget_within_high": ("Within the budget, {amount} left, even at the top of the likely range ({high})",
                           "在预算内，剩余 {amount}，即使按成本区间上限（{high}）也不超"),
    "download_xlsx": ("Download workbook (Excel, live formulas)", "下载工作簿（Excel，公式可编辑）"),
    "download_json": ("Download scenario (JSON)", "下载方案（JSON）"),
    "export_png": ("Export charts (PNG)", "导出图表（PNG）"), "load_json": ("Load scenario (JSON)", "载入方案（JSON）"),
    "copy_link": ("Copy link", "复制链接"), "copied": ("Link copied", "链接已复制"),
    "pin": ("Pin as A", "设为对比基准（方案 A）"), "unpin": ("Clear A", "清除方案 A"),
    "compare_hint": ("Pin the current scenario as A, change inputs, and compare.",
                     "将当前方案固定为 A，修改输入后进行对比。"),
    "difference": ("B - A", "B - A"), "total": ("Total", "合计"),
    "invalid": ("Not applied", "未应用"), "warnings": ("Notes", "提示"),
    "recompute_ms": ("recomputed in", "重算耗时"),
    "redraw_ms": ("figures and chart data sent in", "数字与图表数据发送耗时"),
    "alerts": ("Budget alerts", "预算预警"), "not_reached": ("not reached", "未达到"), "budget": ("Budget", "预算"), "amount": ("Amount", "金额"),
    "alert_line": ("Alert line", "预警线"),
    # the programme editor (workbench.app.programme_editor)
    "ed_plan": ("Plan: model, GPU, dates", "计划：模型、GPU、日期"), "ed_budgets": ("Budgets and alert lines", "预算与预警线"),
    "ed_staff": ("Staff", "人员"), "ed_workstreams": ("Workstreams: training, releases, serving", "工作流：训练、发布、服务"),
    "ed_name": ("Plan name", "计划名称"), "ed_start": ("First month", "起始月份"), "ed_horizon": ("Horizon", "规划期"),
    "months_unit": ("months", "个月"), "ed_budget_total": ("Total budget", "总预算"),
    "ed_alert_lines": ("Alert lines", "预警线"), "ed_remove": ("Remove", "删除"), "ed_add_budget": ("Add a budget", "添加预算"),
    "ed_staff_name": ("Role or team", "岗位或团队"), "ed_fte": ("People (full-time)", "人数（全职）"),
    "ed_monthly_cost": ("Monthly cost per person", "每人每月成本"), "ed_from_month": ("From", "开始"),
    "ed_to_month": ("Until", "结束"), "ed_add_staff": ("Add staff", "添加人员"), "ed_ws_name": ("Workstream", "工作流"),
    "ed_stages": ("Stages it pays for (none: it only serves)", "计入的阶段（不选：只上线服务）"),
    "ed_every": ("Repeat every", "重复间隔"), "ed_cycles": ("Cycles", "轮数"),
    "ed_serve_months": ("Serve each release for", "每个版本上线时长"), "ed_growth": ("Traffic growth", "流量月增长"),
    "ed_percent_month": ("% a month", "% / 月"), "ed_add_workstream": ("Add a workstream", "添加工作流"),
    "ed_until_end": ("to the end", "至规划期末"), "ed_once": ("once", "只做一次"),
    "ed_next_month": ("next month: {month}", "下个月：{month}"),
    "ed_as_base": ("as the plan: {value}", "同计划：{value}"), "ed_not_a_number": ("is not a number", "不是数字"),
    "your_plan": ("Your plan", "你的计划"), "where_money_goes": ("Where the money goes", "成本构成"),
    "knob_help_horizon": ("Months the plan covers", "计划覆盖的月数"),
    "knob_help_every": ("Months between releases", "两次发布之间的月数"),
    "knob_help_cycles": ("How many releases in all", "发布总次数"),
    "knob_help_versions": ("Releases live at once: each is served this many release periods",
                           "同时在线的版本数：每个版本在线这么多个发布周期"),
    "knob_help_growth": ("Growth of the traffic a month, in %", "每月流量增长（%）"),
    "plevers_applied": ("Applied: {name}", "已应用：{name}"), "plevers_undo": ("Undo", "撤销"),
    "edh_name": ("The plan's name, in the file and the menu", "计划名称，显示在文件和菜单中"),
    "edh_start": ("The plan's first calendar month; empty: next month", "计划的第一个日历月；留空：下个月"),
    "edh_horizon_months": ("Months the plan covers; costs after it are reported apart", "计划覆盖的月数；之后的成本单独列出"),
    "edh_budget": ("Typed as you write money: 3M, $3M, 3 million, 300万, ¥2,000万 (empty: no budget)",
                   "按习惯输入金额：3M、$3M、3 million、300万、¥2,000万（留空：无预算）"),
    "edh_alert_percents": ("Shares of each budget that raise an alert when spent, e.g. 50, 80",
                           "花费达到各预算的这些比例时预警，例如 50, 80"),
    "edh_fte": ("Full-time people in this role", "该岗位的全职人数"),
    "edh_usd_per_month": ("What one person costs a month, all-in", "每人每月的全部成本"),
    "edh_start_month": ("First month: a calendar month (2027-03) or the plan's month number", "开始月份：日历月（2027-03）或计划第几个月"),
    "edh_end_month": ("Last month; empty: to the end of the plan", "结束月份；留空：至计划期末"),
    "edh_every_months": ("Months between cycles (releases); empty: once", "每轮（每次发布）之间的月数；留空：只做一次"),
    "edh_cycles": ("How many cycles (releases) in all", "总轮数（发布次数）"),
    "edh_serve_months": ("Months each release is served; 0: not served", "每个版本上线服务的月数；0：不上线"),
    "edh_traffic_growth_per_month": ("Growth of the traffic a month from the first release, in %", "自首次发布起每月流量增长（%）"),
    "edh_stages": ("The training stages each cycle pays for; none: the workstream only serves",
                   "每轮计入的训练阶段；不选：该工作流只上线服务"), "price_read": ("price read {date}", "价格读取于 {date}"),
    "paid_api": ("The same traffic on a paid API: {api} ({model} at {provider}, {price_in} / {price_out} {currency} per "
                 "million input / output tokens; {date}), against {serving} to serve it yourself. A fine-tuned model "
                 "needs a provider that serves your weights.",
                 "同样的流量使用付费 API：{api}（{provider} 的 {model}，每百万输入 / 输出 token {price_in} / {price_out}"
                 "；{date}），自建服务则为 {serving}。微调后的模型需要能托管自有权重的服务商。"),
    "first_finetune": ("First fine-tune (no pre-training)", "首次微调（无预训练）"),
    "no_training_run": ("No training run (serving only)", "无训练（只上线服务）"),
    "serving_only_note": ("it serves an open model as it is", "直接上线开源模型"),
    "plevers_title": ("What could we cut? Savings over the whole plan", "能省在哪里？整个计划期的降本措施"),
    "plevers_find": ("Find savings", "查找降本措施"), "plevers_saves": ("saves {saving}", "节省 {saving}"),
    "plevers_after_risk": ("{amount} after its risk", "计入风险后 {amount}"), "plevers_risk": ("Risk", "风险"),
    "plevers_not_priced": ("not priced", "未计价"), "plevers_apply": ("Apply", "应用"),
    "plevers_none": ("No lever saves money on this plan.", "此计划没有能省钱的措施。"), "crossed_in": ("Crossed in", "达到月份"),
    "budget_basis_plan": ("against the plan's total", "以计划总额为基准"),
    "budget_basis_given": ("against the budget", "以预算为基准"),
    "url_error": ("Some link parameters were not applied", "部分链接参数未被应用"),
    "load_error": ("The file was not loaded", "文件未载入"),
    "mfu_prior": ("prior", "估计值"),
    "memory_per_gpu": ("Memory per GPU", "每卡显存"),
    "memory_of_usable": ("{used} GiB of {usable} GiB usable ({capacity} GiB x {share})",
                         "{used} GiB，可用 {usable} GiB（{capacity} GiB × {share}）"),
    "layout_line": ("layout TP {tp} × PP {pp} × DP {dp}, ZeRO-{zero}, micro-batch {mb}",
                    "并行布局 TP {tp} × PP {pp} × DP {dp}，ZeRO-{zero}，微批 {mb}"),
    "mfu_parts": ("MFU {mfu}: kernel efficiency {kernel} for a run of this compute on 1,024 GPUs ({generation}, {basis}) "
                  "× {layout} for this layout and cluster",
                  "MFU {mfu}：同等算力的训练在 1,024 块 GPU 上的算子效率 {kernel}（{generation}，{basis}）× 本并行布局与集群规模的系数 {layout}"),
    "basis_fitted": ("fitted on published runs", "由公开训练记录拟合"),
    "basis_extrapolated": ("extrapolated: no published run of this generation; {ref} × {speedup} per GPU measured "
                           "by {benchmark}", "外推：该代际没有公开训练记录；按 {benchmark} 实测的每卡 {speedup} 倍于 {ref}"),
    "basis_all": ("extrapolated: no published run of this generation and no measured speed-up; the H100's share of "
                  "peak", "外推：该代际既无公开训练记录也无实测加速比；取 H100 的峰值利用率"),
    "unfit_title": ("Does not fit in memory", "显存放不下"),
    "unfit_need": ("needs {used} GiB per GPU, {usable} GiB usable.", "每卡需要 {used} GiB，可用 {usable} GiB。"),
    "unfit_layout": ("Set {tp_label} {tp}, {pp_label} {pp}, {zero_label} {zero} and {mb_label} {mb}: it fits on these {n} GPUs.",
                     "把{tp_label}设为 {tp}、{pp_label}设为 {pp}、{zero_label}设为 {zero}、{mb_label}设为 {mb}：在这 {n} 块 GPU 上放得下。"),
    "unfit_gpus": ("Or set {n_label} to at least {n}.", "或把{n_label}设为至少 {n}。"),
    "unfit_gpus_only": ("Set {n_label} to at least {n}.", "请把{n_label}设为至少 {n}。"),
    "unfit_none": ("No layout fits at any GPU count: use full recompute, a shorter sequence or a GPU with more memory.",
                   "任何 GPU 数量下都放不下：请使用完全重计算、更短的序列或显存更大的 GPU。"),
    "unfit_totals": ("The totals below assume it fits.", "下列合计按放得下计算，仅供参考。"),
    "none_on_record": ("none on record", "无记录"), "ratio": ("ratio", "比值"),
    # the programme view
    "data_processing": ("Data processing", "数据处理"), "debug": ("Debug environments", "调试环境"),
    "security": ("Security and compliance", "安全与合规"),
    "usd_per_million_trained_tokens": ("Training cost per million trained tokens", "每百万训练 token 的训练成本"),
    "usd_per_million_served_tokens": ("Serving cost per million served tokens", "每百万推理 token 的推理成本"),
    "productive_gpu_hour_share": ("Share of training GPU-hours that trained a model", "训练 GPU 小时中有效训练的占比"),
    "fixed_share": ("Fixed share of the month's cost", "当月成本中固定成本的占比"),
    "view_single": ("Single run", "单次训练"), "view_programme": ("Programme", "项目计划"),
    "programme_preset": ("Programme", "项目计划"), "loaded_file": ("Loaded file", "已载入的文件"),
    "chart_months": ("Cost per month by category", "各月各类别成本"),
    "chart_budget": ("Cumulative spend against each budget, with alert lines", "各项预算的累计支出与预警线"),
    "chart_attribution": ("Cost by {key} and category", "按{key}与类别归属的成本"),
    "chart_kpis": ("Unit costs per month", "各月单位成本"), "month": ("Month", "月份"),
    "chart_own_or_rent": ("Owning the fleet or renting its hours: cumulative cost",
                          "自有集群与按小时租用：累计成本"),
    "own_fleet": ("Own (purchase up front, then power and operations)", "自有（先付购置款，再付电费与运维）"),
    "rent_hours": ("Rent the same hours on demand", "按需租用相同的小时数"),
    "fleets": ("Committed GPUs (fleets)", "承诺的 GPU（集群）"),
    "fleet_name": ("Fleet", "集群"), "fleet_gpus": ("GPUs", "GPU 数"), "fleet_bought": ("Bought", "购买方式"),
    "fleet_months": ("Months", "月份"), "fleet_committed": ("Committed", "承诺金额"),
    "fleet_idle": ("Paid idle (in the horizon)", "空闲支付（规划期内）"), "fleet_used": ("Used", "利用率"),
    "fleet_break_even": ("Owning beats renting after", "自有优于租用的时点"),
    "months_of_use": ("{months:.0f} months of use", "使用 {months:.0f} 个月后"),
    "never": ("not within its useful life at this use", "按当前利用率，在使用年限内不会"),
    "attribute_by": ("Attribute by", "归属维度"), "programme_total": ("Programme total", "项目计划总成本"),
    "first_run": ("First training run", "首次训练"), "after_first_run": ("Everything after it", "后续成本"),
    "beyond_horizon": ("after the horizon (retention tails, commitments and work running past it; not in the total)",
                       "规划期之后（保留期尾部、承诺期剩余与跨越规划期的工作；未计入总成本）"),
    "download_programme": ("Download programme (JSON)", "下载项目计划（JSON）"),
    "download_monthly": ("Download monthly lines (CSV)", "下载月度明细（CSV）"),
    "load_programme": ("Load programme (JSON or TOML)", "载入项目计划（JSON 或 TOML）"),
    "programme_not_applied": ("Not applied: the figures are for the last valid programme (greyed)",
                              "未应用：图表仍为上一个有效项目计划（灰色）"),
    "file_not_in_link": ("A loaded file is not in the link: download it to share it.",
                         "载入的文件不在链接中：请下载后分享。"),
    "programme_loaded": ("Loaded {name}", "已载入 {name}"),
    # the bill against the plan
    "planned": ("planned", "计划"), "actual": ("actual", "实际"), "bill": ("Whole bill", "全部账单"),
    "chart_plan_vs_actual": ("Cumulative billed spend: plan (dashed) against actual (solid), with alert lines",
                             "累计账单支出：计划（虚线）与实际（实线）对比及预警线"),
    "load_bill": ("Load billing exports (FOCUS: CSV, CSV.gz, Parquet; several months at once)",
                  "载入账单导出（FOCUS：CSV、CSV.gz、Parquet；可一次选多个月）"),
    "bill_not_compared": ("The bill was read but not compared", "账单已读取，但未能比较"),
    "Credit": ("Credit", "抵扣"), "Adjustment": ("Adjustment", "调整"), "Tax": ("Tax", "税费"),
    "Usage": ("Usage", "用量"), "Purchase": ("Purchase", "购买"),
    "bill_not_planned": ("not in the plan", "计划外"), "bill_times_plan": ("× {times} the plan", "计划的 {times} 倍"),
    "bill_forecast_in": ("forecast: {month}", "预测：{month}"), "bill_versus": ("Against plan", "相对计划"),
    "bill_gap": ("Actual − planned", "实际 − 计划"), "bill_alert_line": ("Alert line", "预警线"),
    "bill_threshold": ("Threshold", "阈值"), "bill_spent_to_date": ("Spent to date", "截至目前支出"),
    "bill_reached": ("Reached", "触线"),
    "bill_by_category": ("Plan against actual to date, by category", "截至目前计划与实际对比（按类别）"),
    "bill_by_month": ("Plan against actual, by calendar month the bill covers", "计划与实际对比（按账单覆盖的自然月）"),
    "bill_alert_table": ("Actual spend against each budget's alert lines", "各项预算的实际支出与预警线"),
    "bill_money": ("money", "金额"),
    "download_review_csv": ("Download the review (CSV)", "下载账单对比（CSV）"),
    "download_review_xlsx": ("Download the review (Excel)", "下载账单对比（Excel）"),
    "bill_value": ("value", "取值"), "bill_row": ("line", "行号"), "bill_column": ("column", "列"),
    "bill_file": ("file", "文件"), "bill_files": ("{count} files ({first}, ...)", "{count} 个文件（{first} 等）"),
    "bill_reason": ("reason", "原因"),
    "bill_start": ("Plan month 1 is", "计划第 1 个月为"),
    "bill_summary": ("{rows:,} charges read from {name}; {rejected:,} rows rejected ({rejected_money}); actual to date "
                     "{actual}, planned {planned}; forecast at the plan's end {forecast} on the bill",
                     "从 {name} 读取 {rows:,} 条费用；拒绝 {rejected:,} 行（{rejected_money}）；截至目前实际 {actual}，"
                     "计划 {planned}；计划期末账单预测 {forecast}"),
    "bill_flags": ("Flags", "提示"), "bill_rejected": ("Rejected rows", "被拒绝的行"),
    "bill_by_tag": ("Planned and actual to date by {key}", "截至目前按{key}的计划与实际"),
    "reject_record_extra": ("has more fields than the header's {fields} (an unquoted comma?)",
                            "字段数多于表头的 {fields} 个（是否有未加引号的逗号？）"),
    "reject_record_short": ("has fewer fields than the header's {fields} (a line cut short?)",
                            "字段数少于表头的 {fields} 个（是否有被截断的行？）"),
    "reject_record_long_field": ("has a field longer than 131,072 characters", "有字段长度超过 131,072 个字符"),
    "reject_record_quote": ("has a quote that neither opens nor closes a field as CSV requires (text after a closing "
                            "quote?)", "引号不符合 CSV 规则（右引号之后还有文字？）"),
    "reject_record_long_line": ("is longer than the longest record read (1 MiB)", "记录长度超过可读取的上限（1 MiB）"),
    "reject_record_unreadable": ("cannot be read as a CSV record", "无法作为 CSV 记录读取"),
    "reject_row_count_bad": ("is not a whole number of charges, 1 or more (a bill summary's x_RowCount)",
                             "不是 1 或以上的整数费用条数（账单汇总的 x_RowCount）"),
    "reject_cost_empty": ("is empty (FOCUS requires a cost on every row)", "为空（FOCUS 要求每行都有费用）"),
    "reject_cost_not_number": ("is not a number", "不是数字"),
    "reject_cost_huge": ("is beyond {limit} in amount (no single charge is that large)",
                         "金额超过 {limit}（单笔费用不会这么大）"),
    "reject_not_date": ("is not a date and time", "不是日期时间"),
    "reject_end_before_start": ("is before ChargePeriodStart", "早于 ChargePeriodStart"),
    "reject_text_empty": ("is empty (FOCUS requires it on every row)", "为空（FOCUS 要求每行都有）"),
    "reject_no_rate": ("has no exchange rate (the command line takes --rate CUR=units per USD)",
                       "没有汇率（命令行可用 --rate 币种=每美元单位数）"),
    "reject_tags_not_object": ("is not a JSON object of tags", "不是 JSON 对象形式的标签"),
    "reject_tags_nested": ("holds an object or list as a tag's value (FOCUS tags are key-value pairs of plain values)",
                           "标签值为对象或列表（FOCUS 标签是简单值的键值对）"),
    "(unattributed)": ("(unattributed)", "（未归属）"),
    "bill_forecast_like": ("Like for like: {forecast} forecast on the bill against {planned} the plan puts on it",
                           "同口径：账单预测 {forecast}，计划中体现在账单上的部分为 {planned}"),
    "bill_more_values": ("... and {count:,} more values (workbench actuals --json lists them all)",
                         "……另有 {count:,} 个取值（workbench actuals --json 可列出全部）"),
    "bill_credits": ("Apart from usage and purchases (all in the totals): {items}", "用量与购买以外的费用（均计入总额）：{items}"),
    "bill_unrecognised": ("{column}: values FOCUS does not define, counted as they are: {values}",
                          "{column}：FOCUS 未定义的取值，按原样计入：{values}"),
    "bill_projected": ("{resource} budget {budget}: 100 % not reached yet; the forecast reaches it in {month}",
                       "{resource}预算 {budget}：尚未用完；按预测将于 {month} 用完"),
    "bill_spent": ("{resource} budget {budget}: 100 % reached on {day}", "{resource}预算 {budget}：已于 {day} 用完"),
    "bill_projected_never": ("{resource} budget {budget}: 100 % not reached, nor by the forecast within the plan",
                             "{resource}预算 {budget}：尚未用完，按预测在计划期内也不会用完"),
    "bill_more_rejected": ("... and {count:,} more problems (workbench actuals --json lists them all)",
                           "……另有 {count:,} 个问题（workbench actuals --json 可列出全部）"),
    "levers_title": ("Levers: what to change to spend less", "降本措施"),
    "levers_find": ("Find levers", "查找降本措施"),
    "levers_apply": ("Apply", "应用"),
    "levers_service": ("These save money by lowering the service: requests dropped or answered late at peaks",
                       "以下措施靠降低服务水平省钱：高峰时请求被丢弃或延迟响应"),
    "levers_lowers_service": ("Lowers the service level, not a plain saving", "降低服务水平，并非单纯节省"),
    "levers_show_all": ("Show all levers ({count} more: they lose money once their risk is priced, or cannot help here)",
                        "显示全部措施（另有 {count} 项：计入风险后亏钱，或在此无效）"),
    "levers_hint": ("Prices each way to spend less on this scenario, with its risk (one batch of estimates).",
                    "为当前方案计算每种降本方式及其风险（一次批量估算）。"),
    "levers_explained": ("Ranked by risk-adjusted saving. Saving: if nothing goes wrong; risk: the expected cost of "
                         "what may (modelled where the literature gives a basis, otherwise stated); Apply puts the "
                         "lever into the scenario, its cluster kept.",
                         "按风险调整后节省排序。节省：一切顺利时；风险：可能发生问题的期望成本（有文献依据处建模，"
                         "否则文字说明）；“应用”将该措施放入方案，集群规模不变。"),
    "levers_row": ("{name}: saves {saving}, risk {risk}, risk-adjusted {adjusted}, {days} ({changes})",
                   "{name}：节省 {saving}，风险 {risk}，风险调整后 {adjusted}，{days}（{changes}）"),
    "levers_sooner": ("done {days:.1f} days sooner", "提前 {days:.1f} 天完成"),
    "levers_later": ("done {days:.1f} days later", "推迟 {days:.1f} 天完成"),
    "levers_same_days": ("same duration", "时长不变"),
    "levers_applied": ("Applied: {name} ({changes}; the cluster's size kept). Find levers again for this scenario.",
                       "已应用：{name}（{changes}；集群规模不变）。可为当前方案再次查找降本措施。"),
    "levers_not_applicable": ("Not applicable here:", "此处不适用："),
    "levers_crosses": ("Crosses a boundary:", "超出适用范围："),
    "levers_risk_not_priced": ("not priced (below)", "未量化（见下）"),
    "bill_not_read": ("The billing export was not read", "账单导出未能读取"),
    "flag_over_plan": ("{category}: {actual} spent to date against {planned} planned ({change}; flagged above +{limit})",
                       "{category}：截至目前支出 {actual}，计划 {planned}（{change}；超出计划 {limit} 以上即提示）"),
    "flag_unit_cost": ("{service}: cost per {unit} rose {change} from {start} to {end} ({before} -> {after} {currency})",
                       "{service}：每 {unit} 成本从 {start} 到 {end} 上升 {change}（{before} -> {after} {currency}）"),
    "flag_idle": ("{service} {resource}: {cost} billed over {rows} row(s) with no usage",
                  "{service} {resource}：{rows} 行计费共 {cost}，但没有用量"),
    "flag_partial_month": ("the bill covers {share} of {month}: that month is compared with the same share of its "
                           "plan, and the rest of it is forecast", "账单覆盖 {month} 的 {share}：该月按同样比例的计划比较，其余部分计入预测"),
    "flag_months_missing": ("the bill has no charge in {count} month(s) between its first and last ({months}): a "
                            "month missing from the export, or a stray date (set plan month 1)",
                            "账单首末月之间有 {count} 个月没有费用（{months}）：导出缺月或日期有误（可设置计划第 1 个月）"),
    "flag_no_billed_budget": ("the programme's budgets include what a bill does not show (staff, annotation), so no "
                              "alert line is drawn on the bill; a budget of compute, storage, network, logging or "
                              "security would be",
                              "项目预算包含账单上看不到的费用（人员、标注），因此账单上不画预警线；算力、存储、网络、日志或安全预算会画出"),
    "flag_plan_not_whole": ("the plan does not hold all of its work: {warning}", "计划未包含其全部工作：{warning}"),
    "flag_outside": ("{count} month(s) of the bill fall outside the plan ({months}): not compared",
                     "账单中有 {count} 个月不在计划期内（{months}）：未比较"),
    # the timeline's warnings ({money}: an amount in the display currency)
    "tw_budget_spent": ("The {resource} budget ({budget}) is spent by {month_label} (the horizon ends {horizon_label}); the plan "
                        "reaches {percent:.0%} of it by the horizon.",
                        "{resource}预算（{budget}）在 {month_label} 用完（规划期至 {horizon_label}）；到规划期末达到预算的 {percent:.0%}。"),
    "tw_cycles_late": ("Workstream {name!r}: {late} of its {cycles} cycles start after {horizon_label}; their costs are "
                       "not in the total (see the amount after the horizon).",
                       "工作流 {name!r}：{cycles} 轮中有 {late} 轮在 {horizon_label} 之后开始，其成本未计入总成本（见规划期之后的金额）。"),
    "tw_served_after": ("Workstream {name!r}: its last release in the horizon is served until {month_label}; serving "
                        "after {horizon_label} is not priced.",
                        "工作流 {name!r}：规划期内最后一个版本在线至 {month_label}；{horizon_label} 之后的推理未计价。"),
    "tw_retired": ("Workstream {name!r}: its last release is retired on day {day:.0f} of {month_label}; nothing is "
                   "served from then to the end of {horizon_label} (add cycles or keep versions live longer).",
                   "工作流 {name!r}：最后一个版本在 {month_label} 的第 {day:.0f} 天下线；此后到 {horizon_label} 月末没有推理服务"
                   "（可增加发布轮数或延长版本在线时间）。"),
    "tw_serving_gap": ("Workstream {name!r}: each version is retired {gap:.2g} months before the next is released "
                       "(serve_months {serve:g} < every_months {every}); no version serves in those weeks and their "
                       "traffic is neither served nor billed.",
                       "工作流 {name!r}：每个版本在下一个版本发布前 {gap:.2g} 个月即下线（在线月数 {serve:g} < 发布间隔 {every}）；"
                       "这段时间没有版本提供服务，其流量既未服务也未计费。"),
    "tw_fleet_idle": ("Fleet {name!r}: {share:.0%} of its committed GPU-hours in the horizon are idle ({amount}); "
                      "a smaller fleet, a shorter term, or more work on it would use them.",
                      "集群 {name!r}：规划期内 {share:.0%} 的承诺 GPU 小时闲置（{amount}）；可缩小集群、缩短期限或安排更多工作。"),
    "tw_fleet_overflow": ("From {month_label} the {gpu} fleets do not hold all the work (they are full, or their term "
                          "is over): {gpu_hours:,.0f} GPU-h in the horizon are bought as each workstream buys that "
                          "stage, on demand where it was reserved or owned.",
                          "从 {month_label} 起，{gpu} 集群容纳不下全部工作（已满或承诺期已结束）：规划期内有 "
                          "{gpu_hours:,.0f} GPU 小时按各工作流该阶段的方式购买，原为预留或自有的按需购买。"),
    "tw_beyond": ("{amount} fall after {horizon_label} (storage retention and archive tails, work of cycles that "
                  "start or end after it, and the rest of the fleets' terms) and are not in the total.",
                  "{amount} 发生在 {horizon_label} 之后（存储保留期与归档尾部、在此之后开始或结束的轮次，以及集群承诺期的剩余部分），"
                  "未计入总成本。"),
    "workstream": ("workstream", "工作流"), "team": ("team", "团队"), "project": ("project", "项目"),
    "model_version": ("model version", "模型版本"), "environment": ("environment", "环境"),
    "data_error": ("The planner cannot start: a data table is invalid", "规划工具无法启动：数据表无效"), "allowed": ("allowed", "允许"),
    "used_instead": ("used instead", "改用"),
    "compare_what": ("A: the pinned scenario; B: the current inputs. Changed:", "A：固定的方案；B：当前输入。改动："),
    "compare_same": ("nothing yet (change an input)", "暂无（请修改输入）"),
    "gpu_left_default": ("gpu={gpu} cannot be priced as linked ({reason}), so the link opens on the default "
                         "accelerator, {default}: add price_per_gpu_hour=... to the link to plan on {gpu}",
                         "gpu={gpu} 无法按链接计价（{reason}），因此链接以默认加速卡 {default} 打开："
                         "在链接中加入 price_per_gpu_hour=... 即可按 {gpu} 规划"),
    "pricing_followed": ("Pricing mode set to {mode}: {provider} rents {gpu} only that way on record",
                         "计费方式已改为“{mode}”：{provider} 只以这种方式出租 {gpu}（据现有记录）"),
    "stale": ("The figures, the link and the downloads are for the last valid inputs (greyed): correct {field} "
              "to update them",
              "图表、数字、链接与下载内容对应上一次有效的输入（已变灰）：请更正“{field}”以更新"),
    "internal_error": ("This scenario could not be computed, so the page still shows the last one that could. "
                       "The details are in the server's log; please report the scenario.",
                       "无法计算该方案，页面仍显示上一个可计算的方案。详情见服务器日志，请反馈该方案。"),
    "item": ("item", "项目"), "quantity": ("quantity", "数量"), "unit_cost": ("unit cost", "单价"),
    "type": ("type", "类型"), "formula_source": ("formula · source", "公式 · 出处"),
}


#: Validation problems (``ScenarioError.problem``) and allowed-value texts in Chinese; a problem not listed
#: here (one with a GPU name or a number in it) is shown in English.
PROBLEMS_ZH = {
    # the rest of the checks (tests/test_messages_zh.py finds every literal problem in the code and wants it here)
    "is negative": "为负数", "is not a language of the app": "不是应用支持的语言", "is not a view of the app": "不是应用的视图",
    "a batch of scenarios cannot be shown": "无法显示一批方案", "the size curve takes a single scenario": "规模曲线只接受单个方案",
    "is not a number of points": "不是有效的点数", "is not a size span": "不是有效的规模范围",
    "the total cost overflows": "总成本溢出", "is not a Scenario": "不是方案（Scenario）",
    "has no single serving summary": "没有单一的推理汇总", "is not a single Scenario": "不是单个方案",
    "is not a number of draws": "不是有效的抽样次数", "is not a seed": "不是有效的随机种子",
    "sensitivity takes a single scenario": "敏感性分析只接受单个方案", "is not a numeric scenario field": "不是数值型的方案字段",
    "is not same while pricing is self_hosted (owned GPUs run every stage)":
        "计费方式为自建时必须为“与训练集群相同”（自有 GPU 运行所有阶段）",
    "is not a list of 1 or more workstreams": "不是包含至少一条工作流的列表",
    "is not a list of 1 to 10 percentages": "不是包含 1 到 10 个百分比的列表",
    "is not a way of checking content": "不是内容审核方式", "is not true or false": "不是 true 或 false",
    "names a stage twice": "重复列出了同一阶段", "needs every_months (how often a cycle starts)": "需要发布间隔（every_months，多久开始一轮）",
    "is 0 while serve_months is set": "在设置了在线月数时为 0", "is not a usable tag key": "不是可用的标签键",
    "holds several values": "包含多个值", "is not a list": "不是列表", "is not a Workstream": "不是工作流",
    "is not a resource with a budget": "不是有预算的资源", "is not a Programme": "不是项目计划",
    "is not a tag of this programme": "不是本项目计划的标签",
    "is a vanishing fraction of a token": "是微不足道的 token 分数",
    "is not a whole number of the hardware's useful lives": "不是硬件使用年限的整数倍",
    "is not a number": "不是数字", "is not a finite number": "不是有限的数字", "is not a whole number": "不是整数",
    "is out of range": "超出允许范围", "is not an object": "不是对象", "is not a non-empty text": "不是非空文本",
    "is too long or holds control characters": "过长或含有控制字符", "is missing": "缺失",
    "is not a list of stages": "不是阶段列表", "is not a training stage": "不是训练阶段",
    "is missing or not supported": "缺失或不受支持", "is not in increasing order without repeats": "不是无重复的递增顺序",
    "a JSON or TOML file saved as UTF-8": "以 UTF-8 保存的 JSON 或 TOML 文件",
    "a JSON or TOML object (workbench plan --example)": "JSON 或 TOML 对象（见 workbench plan --example）", "is too large": "数值过大", "is not text": "不是文本", "is required": "必填",
    "is empty": "为空", "contains control or unassigned characters": "含有控制字符或未分配的字符",
    "is not one of the allowed values": "不是允许的取值", "is not a list of numbers": "不是数字列表",
    "must be a scalar or a non-empty 1-d array": "必须是单个值或非空的一维数组",
    "is given twice in the URL": "在链接中出现了两次", "is not a currency of the app": "不是本应用支持的货币", "is not a preset": "不是预设的名称",
    "is not a programme setting": "不是项目计划的设置",
    "has nothing to change: the programme has no release workstream": "无可更改：该项目计划没有发布工作流", "is given twice in the file": "在文件中出现了两次",
    "is not supported by this version of the workbench": "本版本不支持",
    "is not a JSON object": "不是 JSON 对象", "is nested too deeply": "嵌套层数过多",
    "holds several values; this loads one scenario": "包含多个取值；此处只能载入一个方案",
    "the catalog has no FLOPS figure for this accelerator": "目录中没有该加速器的算力数据",
    "a batch of scenarios has no URL form": "批量方案无法生成链接",
    "JSON object": "JSON 对象", "a JSON object": "JSON 对象", "one value per field": "每个字段一个取值",
    "a single scenario": "单个方案",
    "names the programme's own lines (security)": "是项目计划自身费用（安全与合规）使用的名称", "another name": "另一个名称",
    "is the name of a workstream (attribution by workstream would merge them)": "与某个工作流同名（按工作流归集时会被合并）",
    "is given twice in the same object": "在同一个对象中出现了两次", "each key once": "每个键只出现一次",
    "is used twice": "被使用了两次", "a name of its own per entry": "每项一个独立的名称",
    "a name of its own per workstream": "每个工作流一个独立的名称", "a name of its own": "独立的名称",
    "is the name of a workstream or staff entry": "与某个工作流或人员同名", "is not a way of committing to GPUs": "不是承诺 GPU 的方式",
    "is set; in a programme each release is served for serve_months":
        "已设置；项目计划中每个版本按工作流的 serve_months（在线月数）提供服务",
    "serving_months = 0 and serve_months on the workstream": "serving_months = 0，并在工作流上设置 serve_months",
    # money typed as people write it (workbench.plan.money)
    "is not an amount of money": "不是可识别的金额",
    "is negative: an amount of money here is 0 or more": "为负数：此处金额须不小于 0",
    "uses points to group thousands: a point is the decimal mark here": "用点分隔千位：此处点是小数点",
    "has a comma that is not a thousands separator (groups of three digits): a decimal comma is ambiguous":
        "含有不是千位分隔符（每组三位）的逗号：小数逗号有歧义",
    "names two currencies": "同时写了两种货币", "is not a plan this app wrote": "不是本应用生成的计划",
    "is incomplete: the link was cut short": "不完整：链接被截断了", "is not a calendar month": "不是日历月份", "is not a calendar date": "不是日历日期", "is not a tag of this programme with a value": "不是本项目计划中带取值的标签", "is not a finite amount of 0 or more": "不是不小于 0 的有限金额",
    # plan kinds in a programme (workbench.programmes.programme)
    "trains a model whose plan_kind is serve_only": "要训练的模型的计划类型（plan_kind）是 serve_only（只上线服务）",
    "is empty and serve_months is 0: the workstream does nothing": "为空且 serve_months 为 0：该工作流什么也不做",
}
#: (English start of a problem, Chinese text with ``{rest}`` for what follows the start).
_PROBLEM_PREFIXES_ZH = (("contains a comma;", "含有逗号；小数请用小数点，不要用千位分隔符（如 1.5T、7500000 或 7.5M）"),
                        ("unknown field;", "未知字段；见 data/scenario_fields.csv"),
                        ("is not valid JSON", "不是有效的 JSON"), ("is not UTF-8 text", "不是 UTF-8 文本"),
                        ("is below tensor_parallel x pipeline_parallel=", "低于张量并行 × 流水线并行 = {rest}"),
                        ("exceeds params=", "超过总参数量 {rest}"))


#: (pattern of a problem that holds numbers, Chinese text with the pattern's groups as {0}, {1}, ...).
_PROBLEM_PATTERNS_ZH = (
    # a programme file's problems and allowed values (workbench.programmes.programme)
    (r"a month from 1 to the horizon \((\d+)\)", "1 到规划期末（第 {0} 个月）之间的月份"),
    (r"is not a programme field; did you mean (.+)\?", "不是项目计划的字段；是否想输入 {0}？"),
    (r"is not a workstream field; did you mean (.+)\?", "不是工作流的字段；是否想输入 {0}？"),
    (r"is not a staff field; did you mean (.+)\?", "不是人员的字段；是否想输入 {0}？"),
    (r"is not a programme field", "不是项目计划的字段"), (r"is not a workstream field", "不是工作流的字段"),
    (r"is not a staff field", "不是人员的字段"),
    (r"a name of 1 to (\d+) (?:printable )?characters(?: on one line)?", "1 到 {0} 个可打印字符的名称（单行）"),
    (r"ends before workstream (.+) starts \(month (\d+)\)", "早于工作流 {0} 的开始（第 {1} 个月）"),
    (r"takes ([\d,]+) requests a day past (\S+) within the (\d+) months from its start to the horizon",
     "在从开始到规划期末的 {2} 个月内使每天 {0} 次请求超过 {1}"),
    (r"(.+) \((workstream .+)\)", "{0}（{1}）"),
    (r"is more pipeline stages than the model's ([\d,]+) layers", "流水线级数超过模型的 {0} 层"),
    (r"is more than the model's ([\d,]+) attention heads \(d_model / (\d+)\)", "超过模型的 {0} 个注意力头（d_model / {1}）"),
    (r"unknown GPU (.+); closest: (.+) \(see `workbench gpus`\)", "未知的 GPU 型号 {0}；最接近的：{1}（见 `workbench gpus`）"),
    (r"(\S+) has no (\S+) peak in the catalog", "目录中没有 {0} 的 {1} 峰值算力"),
    (r"(\S+) has no memory bandwidth in the catalog for the serving roofline", "目录中没有 {0} 的显存带宽，无法计算推理"),
    (r"(\S+) has no published TDP for the power cost", "{0} 没有公开的功耗（TDP），无法计算电费"),
    (r"no price on record for (\S+); set price_per_gpu_hour", "没有 {0} 的价格记录；请填写每 GPU 小时价格（price_per_gpu_hour）"),
    (r"no (\S+) price from '(.+)' for (\S+) \(on record: (.*)\); set price_per_gpu_hour or provider=median",
     "供应商 {1} 没有 {2} 的 {0} 价格（已有记录：{3}）；请填写每 GPU 小时价格，或选择供应商“各供应商典型价”"),
    (r"no (\S+) price from '(.+)' for (\S+) \(on record: (.*)\); set price_per_gpu_hour",
     "供应商 {1} 没有 {2} 的 {0} 价格（已有记录：{3}）；请填写每 GPU 小时价格"),
    (r"no typical monthly price: no provider lists one beside its on-demand price; choose a provider that rents "
     r"(\S+) monthly \(on record: (.*)\) or set price_per_gpu_hour",
     "没有包月的典型价格：没有供应商同时列出包月和按量价格；请选择按月出租 {0} 的供应商（已有记录：{1}），或填写每 GPU 小时价格"),
    (r"(\S+) rents (\S+) only (.+), not (\S+)", "{0} 只以“{2}”方式出租 {1}，不提供“{3}”；请改选计费方式"),
    (r"(\S+) rents (\S+) only (\S+): the replicas added at the peak would be rented for whole terms, which "
     r"autoscaling does not save", "{0} 只以“{2}”方式出租 {1}：高峰时增加的副本也要按整个周期租用，自动扩容省不下钱"),
    (r"no (\S+) price from (\S+) for (\S+) in region '(.+)' \(its regions on record: (.*)\)",
     "供应商 {1} 在地域 {3} 没有 {2} 的 {0} 价格（有记录的地域：{4}）"),
    (r"region '(.+)' needs a provider: the typical price is no region's \(choose a provider that sells in it\)",
     "地域 {0} 需要先选择供应商：典型价格不属于任何地域（请选择在该地域销售的供应商）"),
    (r"needs a provider: transfer between regions is priced by the provider's pair of regions",
     "需要先选择供应商：跨地域流量按供应商两个地域之间的价格计费"),
    (r"is not a region on record \(data/prices.csv, data/region_prices.csv\)",
     "不是有记录的地域（data/prices.csv、data/region_prices.csv）"),
    (r"has no (\S+) price on record for (\S+) from provider (\S+) in (\S+) \(data/prices.csv\)",
     "供应商 {2} 在地域 {3} 没有 {1} 的“{0}”价格记录（data/prices.csv）"),
    (r"has no (\S+) price on record for (\S+) from provider (\S+) \(data/prices.csv\)",
     "供应商 {2} 没有 {1} 的“{0}”价格记录（data/prices.csv）"),
    (r"is not a region of (\S+) on record \(data/regions.csv\)", "不是 {0} 有记录的地域（data/regions.csv）"),
    (r"needs a provider: the typical price is no region's", "需要先选择供应商：典型价格不属于任何地域"),
    (r"no purchase price on record for (\S+) \(data/hardware_prices.csv\); give one for self_hosted pricing",
     "没有 {0} 的采购价记录（data/hardware_prices.csv）；自建机房计价需填写采购价"),
    (r"is not UTF-8 text \(byte (\d+)\)", "不是 UTF-8 文本（第 {0} 字节）"),
    (r"is not valid JSON \((.*)\)", "不是有效的 JSON（{0}）"),
    (r"is too large for a scenario file", "作为方案文件过大"),
    (r"names no (\S+) of this programme", "不是本项目计划中的 {0} 取值"),
    (r"serve more than ([\d,]+) version-months \(cycles x months each release is served, over the workstreams\)",
     "在线的版本月数（轮数 × 每个版本在线月数，所有工作流合计）超过 {0}"),
    (r"pre-trains a model whose plan_kind is (\S+)", "要预训练的模型的计划类型（plan_kind）是 {0}"),
    (r"an amount such as (.+)", "金额，例如 {0}"),
    (r"serving for serving_months > 0 needs the weights \(([\d,]+) GB in (\S+)\) and one request's KV cache in one "
     r"replica, which takes (.+) of (\S+) memory(.*)", "推理月数大于 0 时，一个副本须放下权重（{0} GB，{1}）和一个请求的 "
     "KV 缓存，这需要 {2} 的 {3} 显存{4}"),
)


def _named_zh(text: str) -> str:
    """A provider id or pricing mode (or a list of them, ``a, b``) by its Chinese name; other text as it is."""
    names = {**{k: v[1] for k, v in CHOICE_LABELS["provider"].items()},
             **{k: v[1] for k, v in CHOICE_LABELS["pricing"].items() if k != "same"}}
    parts = text.split(", ")
    return "、".join(names[p] for p in parts) if all(p in names for p in parts) else text


def problem_zh(problem: str) -> str:
    """The Chinese text of a validation problem, or the English one when there is no translation."""
    if problem in PROBLEMS_ZH:
        return PROBLEMS_ZH[problem]
    for pattern, text in _PROBLEM_PATTERNS_ZH:
        match = re.fullmatch(pattern, problem)
        if match:
            # a problem inside another is translated too; a provider or a pricing mode read by its name
            groups = [_named_zh(problem_zh(g)) for g in match.groups()]
            return text.format(*groups).replace(" GPUs", " 块 GPU")
    for prefix, text in _PROBLEM_PREFIXES_ZH:
        if problem.startswith(prefix):
            return text.format(rest=problem[len(prefix):])
    if problem.startswith("is ") and problem.endswith(" characters long"):
        return f"长度为 {problem[3:-len(' characters long')]} 个字符"
    return problem


#: Labels of menu choices whose ids are not words a reader knows (the ids stay the values, in links and files).
CHOICE_LABELS = {
    "provider": {"median": ("typical across providers", "各供应商典型价"), "aliyun": ("Alibaba Cloud", "阿里云"),
                 "aws": ("AWS", "亚马逊云科技 AWS"),
                 "ctyun": ("China Telecom Cloud (bulletin)", "天翼云（省分公司行情）"),
                 "omniyq": ("OmniYQ (reseller)", "云擎天下（算力租赁商）"), "azure": ("Microsoft Azure", "微软 Azure"),
                 "gcp": ("Google Cloud", "谷歌云 Google Cloud"), "akash": ("Akash", "Akash"),
                 "hyperstack": ("Hyperstack", "Hyperstack"), "lambda": ("Lambda", "Lambda"), "nebius": ("Nebius", "Nebius"),
                 "paperspace": ("Paperspace", "Paperspace"), "vast": ("Vast.ai", "Vast.ai"),
                 "runpod-community": ("RunPod community cloud", "RunPod 社区云"),
                 "runpod-secure": ("RunPod secure cloud", "RunPod 安全云"),
                 "deepseek-v3-report": ("DeepSeek-V3 report (an assumed rental price)", "DeepSeek-V3 报告（假设的租用价格）"),
                 "mosaicml-2023": ("MosaicML, 2023 (a quoted rate)", "MosaicML 2023 年报价")},
    "region": {"": ("none chosen: the provider's cheapest", "不指定：该供应商最便宜的地域")},
    "data_region": {"": ("the cluster's region", "与集群同一地域")},
    "plan_kind": {"pretrain": ("pre-train from scratch", "从头预训练"),
                  "open_weights": ("fine-tune open weights and serve", "基于开源权重（微调并上线）"),
                  "serve_only": ("serve an open model only", "只上线开源模型")},
    "pricing": {"on_demand": ("on-demand", "按量付费"), "reserved_1y": ("reserved, 1 year", "包年（1 年期）"),
                "reserved_3y": ("reserved, 3 years", "包年（3 年期）"),
                "monthly": ("monthly rental (whole months)", "包月（按整月计费）"),
                "spot": ("spot (interruptible)", "抢占式（竞价，可能被回收）"),
                "self_hosted": ("self-hosted", "自建"), "same": ("as the cluster", "与训练集群相同")},
    "checkpoint_writes": {"synchronous": ("synchronous (the job waits)", "同步（作业等待）"),
                          "asynchronous": ("asynchronous (a host-memory copy)", "异步（复制到主机内存）")},
    "divergence_allowance": {"expected": ("expected restarts priced", "计入期望重启成本"), "none": ("none", "不计")},
    "scaling_law": {"besiroglu2024": ("Besiroglu et al. 2024", "Besiroglu 等 2024"),
                    "hoffmann2022": ("Hoffmann et al. 2022 (Chinchilla)", "Hoffmann 等 2022（Chinchilla）")},
    "recompute": {"none": ("none", "不重算"), "selective": ("selective", "选择性重算"), "full": ("full", "完全重算")},
    "attention_kernel": {"flash": ("flash (fused)", "flash（融合内核）"), "standard": ("standard", "标准")},
    "serving_prefill": {"interleaved": ("interleaved", "交替"), "disaggregated": ("disaggregated", "分离")},
    "serving_provisioning": {"fixed": ("fixed (peak all day)", "固定（全天按峰值）"),
                             "autoscaling": ("autoscaling", "自动扩缩")},
}


#: Fields whose choices are another field's (the stages' pricing modes are the cluster's, and "same").
CHOICES_OF = {"experiment_pricing": "pricing", "post_training_pricing": "pricing", "serving_pricing": "pricing",
              "serving_peak_pricing": "pricing"}


def choice_label(field: str, choice: str, lang: str = "en") -> str:
    """The menu label of ``choice`` of ``field`` in ``lang``; the id itself when it has none."""
    pair = CHOICE_LABELS.get(CHOICES_OF.get(field, field), {}).get(choice)
    return choice if pair is None else pair[1] if lang == "zh" else pair[0]


def t(key: str, lang: str = "en") -> str:
    """The text for ``key`` in ``lang``; the key itself when there is none."""
    pair = TEXT.get(key)
    if pair is None:
        return key
    return pair[1] if lang == "zh" else pair[0]


#: Units of the cost lines in Chinese.
UNITS_ZH = {"GPU-h": "GPU 小时", "FTE-month": "人月", "GB-month": "GB·月", "GB/s-month": "GB/s·月", "kW-month": "kW·月",
            "kWh": "千瓦时", "labels": "条标注", "rating": "次评分", "hour": "小时", "M tokens": "百万 token", "GB": "GB",
            "USD": "美元", "TB": "TB", "call": "次调用", "record": "条记录", "month": "月"}


@lru_cache(maxsize=1)
def _items_zh() -> dict:
    from .data import read_table  # pandas, on the first Chinese cost line: the server starts without it
    table = read_table("line_items_zh.csv", required=("item", "item_zh"), key="item")
    return dict(zip(table["item"], table["item_zh"]))


def item_label(item: str, lang: str = "en") -> str:
    """A cost line's name in ``lang``: ``data/line_items_zh.csv`` for Chinese, composed for ``A: B`` and
    ``A (experiments)``; the English name where none is known (a test keeps every line's name translated)."""
    if lang != "zh":
        return item
    names = _items_zh()
    if item in names:
        return names[item]
    if item.endswith(" (experiments)"):
        return f"{item_label(item[:-len(' (experiments)')], lang)}（实验）"
    head, sep, tail = item.partition(": ")
    if sep and head in names or sep and head.endswith(" (experiments)"):
        return f"{item_label(head, lang)}：{item_label(tail, lang)}"
    return item


def unit_label(unit: str, lang: str = "en") -> str:
    """A cost line's unit in ``lang``."""
    return UNITS_ZH.get(unit, unit) if lang == "zh" else unit


#: Chinese names of the workstreams and staff of the named programmes (data/programmes/), and of the lines a
#: programme books to itself; a user's own names are shown as typed.
NAMES_ZH = {"pre-training": "预训练", "monthly fine-tune": "每月微调", "quarterly release": "季度发布",
            "serving": "推理服务", "core team": "核心团队", "post-training team": "后训练团队", "operations": "运维",
            "programme": "项目计划", "development": "开发调试"}


def name_label(name: str, lang: str = "en") -> str:
    """A workstream's or staff entry's name in ``lang`` (the named programmes' own; others as typed)."""
    return NAMES_ZH.get(name, name) if lang == "zh" else name


#: Words a finance reader may not know, explained on hover where the app shows them (docs/finance-guide.md's
#: glossary says the same).
GLOSSARY = {
    "MFU": ("Model FLOPs utilisation: the share of its peak speed a GPU really reaches in training (30-50 % is "
            "typical); lower means more GPU-hours for the same work",
            "模型算力利用率：训练中 GPU 实际达到其峰值速度的比例（常见 30%–50%）；越低，同样的工作需要越多 GPU 小时"),
    "P10–P90": ("The likely range: the uncertain inputs varied together many times; 8 outcomes in 10 fall inside it",
                "成本区间：不确定的输入一起反复随机变化，十次中有八次结果落在区间内"),
    "GPU-h": ("GPU-hour: one GPU used for one hour, what clouds bill training by", "GPU 小时：一块 GPU 使用一小时，云厂商按此为训练计费"),
    "ZeRO": ("Sharding of the optimizer state, gradients and weights over the data-parallel GPUs (less memory each)",
             "把优化器状态、梯度和权重分片到各数据并行 GPU 上（每块占用更少显存）"),
    "TP": ("Tensor parallel: each layer split over GPUs of one server", "张量并行：每一层拆到同一台服务器的多块 GPU 上"),
    "PP": ("Pipeline parallel: the layers split into stages on different GPUs", "流水线并行：各层分成若干级，放在不同 GPU 上"),
    "DP": ("Data parallel: copies of the model each training on part of the batch", "数据并行：多份模型副本各训练一部分数据"),
    "FOCUS": ("FinOps Open Cost and Usage Specification: the format clouds export bills in",
              "FinOps 开放成本与用量规范：各云厂商导出账单的格式"),
    "prior": ("The value the workbench predicts from published runs when you have not typed a measured one",
              "您未填写实测值时，工作台根据公开训练记录预测的数值"),
    "估计值": ("", "您未填写实测值时，工作台根据公开训练记录预测的数值"),
}
_GLOSSARY_WORDS = re.compile(r"(?<![\w-])(" + "|".join(re.escape(k) for k in sorted(GLOSSARY, key=len, reverse=True))
                             + r")(?!\w)")


def with_glossary(escaped_html: str, lang: str = "en") -> str:
    """``escaped_html`` (text already escaped) with each glossary word explained on hover (``<abbr title>``)."""
    def explain(match):
        en, zh = GLOSSARY[match.group(1)]
        meaning = (zh if lang == "zh" else en) or en or zh
        return (f"<abbr class='wb-glossary' title=\"{html.escape(meaning, quote=True)}\">{match.group(1)}</abbr>"
                if meaning else match.group(1))
    return _GLOSSARY_WORDS.sub(explain, escaped_html)


def month_text(label, lang: str = "en") -> str:
    """A calendar month (``2027-03``) as a reader of ``lang`` writes it: ``2027-03``, ``2027 年 3 月``."""
    match = re.fullmatch(r"(\d{4})-(\d{2})", str(label))
    return f"{match[1]} 年 {int(match[2])} 月" if lang == "zh" and match else str(label)


def day_text(day, lang: str = "en") -> str:
    """A day (a timestamp or ``2027-03-17``) as a reader of ``lang`` writes it: ``2027-03-17``, ``2027 年 3 月 17 日``."""
    match = re.match(r"(\d{4})-(\d{2})-(\d{2})", str(day))
    if not match:
        return str(day)
    return f"{match[1]} 年 {int(match[2])} 月 {int(match[3])} 日" if lang == "zh" else match[0]


def calendar_month(text):
    """A calendar month as people type it, as ``YYYY-MM``: ``2025-03``, ``2025-3``, ``2025年3月``, ``2025 年 3 月``,
    ``2025.3``, ``2025/03``; anything else is returned as it is (for its field to refuse)."""
    if not isinstance(text, str):
        return text
    match = re.fullmatch(r"\s*(\d{4})\s*(?:-|/|\.|年)\s*(\d{1,2})\s*月?\s*", text)
    if not match or not 1 <= int(match[2]) <= 12:
        return text
    return f"{match[1]}-{int(match[2]):02d}"
