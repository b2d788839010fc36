"""The app's style sheet (one <style> element on the page)."""

CSS = """
.wb-planner { font-family: system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', sans-serif; }
.wb-title { margin: 4px 0 0 0; }
.wb-name { font-size: 18px; font-weight: 600; margin-top: 6px; }
.wb-subtitle { color: #555; margin-bottom: 6px; }
.wb-help { color: #777; margin: -6px 0 0 165px; }
/* under a note or an error the help keeps its distance (the -6px above is for an empty message row) */
.wb-control:has(.wb-message .wb-boundary, .wb-message .wb-error) .wb-help { margin-top: 3px; }
.wb-glossary { text-decoration: underline dotted; cursor: help; }
a.wb-download { white-space: nowrap; }  /* a link's words stay together (下载工作簿（Excel，公式可编辑）) */
/* an upload button says what it loads, not ipywidgets' file counter ("Load a bill (0)"): the button's own text is
   hidden and its title (the same words, set by label_upload) shown in its place */
.wb-upload.widget-upload { font-size: 0 !important; }
.wb-upload.widget-upload i { font-size: var(--jp-widgets-font-size, 13px); margin-right: 6px; }
.wb-upload.widget-upload::after { content: attr(title); font-size: var(--jp-widgets-font-size, 13px); }
.wb-help .widget-html-content { font-size: 11px; line-height: 1.25; }
.wb-control .widget-html-content { line-height: 1.3; }
.wb-message .widget-html-content { line-height: 1.3; }
.wb-unit { color: #777; font-weight: normal; }
.wb-error { color: #b00020; font-size: 12px; }
.wb-info { color: #1a4f8b; font-size: 12px; }
.wb-boundary { color: #8a5300; font-size: 12px; }
.wb-lever-risk { color: #555; font-size: 12px; line-height: 1.4; }
.wb-lever { font-size: 13px; line-height: 1.4; margin-left: 8px; }
.wb-cards { display: flex; flex-wrap: wrap; gap: 8px; margin: 6px 0; }
.wb-card { border: 1px solid #ddd; border-radius: 6px; padding: 6px 10px; min-width: 150px; }
.wb-card-label { color: #666; font-size: 11px; }
.wb-card-value { font-size: 16px; font-weight: 600; }
.wb-total .wb-card-value { font-size: 22px; color: #1d4e89; }
.wb-alerts, .wb-notes, .wb-serving, .wb-memory { font-size: 12px; margin: 4px 0; }
.wb-main-costs { font-size: 13px; margin: 4px 0; }
.wb-unfit .wb-card-value { color: #9a9a9a; text-decoration: line-through; }
.wb-unfit .wb-card { background: #f3f3f3; }
.wb-unfit-message { color: #a61b1b; font-size: 13px; font-weight: 600; margin: 4px 0; }
.wb-notes { color: #8a5a00; }
.wb-timing { color: #999; font-size: 11px; }
table.wb-lines, table.wb-compare { border-collapse: collapse; font-size: 11px; }
table.wb-lines td, table.wb-lines th, table.wb-compare td, table.wb-compare th { padding: 2px 6px; border-bottom: 1px solid #eee; text-align: left; }
.wb-download { margin-right: 8px; }
.wb-lines td.wb-num { text-align: right; white-space: nowrap; }
.wb-stale { opacity: 0.45; }  /* figures of the last valid inputs while a typed value is refused */
.wb-hidden { display: none !important; }  /* a control the plan's kind does not use */
.wb-lines td.wb-tag, .wb-lines th { white-space: nowrap; }  /* short words: CJK text would otherwise break per character */
.wb-lines td.wb-source { color: #777; font-size: 10px; max-width: 360px; }
.wb-lines td, .wb-lines th { vertical-align: top; line-height: 1.25; }
"""


def label_upload(upload, text: str) -> None:
    """Give an ipywidgets ``FileUpload`` the words ``text`` without its file counter (see ``.wb-upload`` above)."""
    upload.add_class("wb-upload")
    upload.description = text
    upload.tooltip = text
