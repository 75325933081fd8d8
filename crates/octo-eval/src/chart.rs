//! An SVG chart of runs: for each, bars of pass@1 and of the last attempt's pass rate, with the
//! run's cost under it. Plain SVG (no script, no outside references), so it opens anywhere.

use crate::report::Summary;
use std::fmt::Write;

/// Escapes text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The chart of `runs` (label and summary).
pub fn svg(runs: &[(String, Summary)]) -> String {
    let (bar, gap, height, top, left) = (28.0, 36.0, 200.0, 30.0, 50.0);
    let group = bar * 2.0 + gap;
    let width = left + group * runs.len().max(1) as f64 + 20.0;
    let total_h = top + height + 80.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{total_h:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for pct in [0, 25, 50, 75, 100] {
        let y = top + height * (1.0 - f64::from(pct) / 100.0);
        let _ = writeln!(
            out,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{pct}%</text>",
            width - 10.0,
            left - 6.0,
            y + 4.0
        );
    }
    for (i, (label, s)) in runs.iter().enumerate() {
        let x0 = left + gap / 2.0 + group * i as f64;
        let last = s.attempts.max(1);
        let bars = [(1, "#4c78a8"), (last, "#72b7b2")];
        for (j, (k, colour)) in bars.iter().enumerate() {
            let rate = s.all.rate(*k).unwrap_or(0.0);
            let h = height * rate / 100.0;
            let x = x0 + bar * j as f64;
            let _ = writeln!(
                out,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{colour}\">\
                 <title>pass@{k}: {rate:.1}%</title></rect>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{rate:.0}</text>",
                top + height - h,
                bar - 2.0,
                x + bar / 2.0 - 1.0,
                top + height - h - 4.0
            );
        }
        let cx = x0 + bar;
        let _ = writeln!(
            out,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
            top + height + 16.0,
            esc(label),
            top + height + 32.0,
            esc(&crate::report::cost(s.cost_usd))
        );
    }
    let _ = writeln!(
        out,
        "<rect x=\"{left}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"#4c78a8\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\">pass@1</text>\
         <rect x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"#72b7b2\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\">pass@last attempt</text>\n</svg>",
        total_h - 22.0,
        left + 14.0,
        total_h - 13.0,
        left + 70.0,
        total_h - 22.0,
        left + 84.0,
        total_h - 13.0
    );
    out
}
