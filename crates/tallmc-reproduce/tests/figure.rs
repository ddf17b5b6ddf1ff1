//! Public-API tests of the SVG figure module (drawn by plotters' SVG backend): determinism, well-formed XML, escaping, ticks and
//! the handling of NaN, empty and degenerate input.

use tallmc_reproduce::figure::{
    Axes, Bars, Color, Figure, Histogram, Legend, Line, Marker, PALETTE, RefLine, Scale, Scatter,
    TickLabel,
};

/// Checks that `svg` is well-formed XML as far as our writer can go wrong: tags balanced and
/// properly nested, attribute values quoted, no raw `<`, `>` or stray `&` in text or attributes.
/// Returns the element names in document order.
fn check_xml(svg: &str) -> Result<Vec<String>, String> {
    let valid_entity = |rest: &str| {
        ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].iter().any(|e| rest.starts_with(e))
    };
    let check_chars = |s: &str, what: &str| -> Result<(), String> {
        for (i, c) in s.char_indices() {
            match c {
                '<' | '>' => return Err(format!("raw {c:?} in {what}: {s:?}")),
                '&' if !valid_entity(&s[i..]) => return Err(format!("stray & in {what}: {s:?}")),
                _ => {}
            }
        }
        Ok(())
    };
    let body = svg
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .ok_or("missing XML declaration")?;
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find('<') {
        let (text, tail) = rest.split_at(start);
        check_chars(text, "text")?;
        if stack.is_empty() && !text.trim().is_empty() {
            return Err(format!("text outside the root: {text:?}"));
        }
        // The tag ends at the first '>' outside quotes.
        let mut in_quotes = false;
        let end = tail
            .char_indices()
            .find(|&(_, c)| {
                in_quotes ^= c == '"';
                c == '>' && !in_quotes
            })
            .map(|(i, _)| i)
            .ok_or("unterminated tag")?;
        let tag = &tail[1..end];
        rest = &tail[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or(format!("unexpected </{name}>"))?;
            if open != name {
                return Err(format!("<{open}> closed by </{name}>"));
            }
            continue;
        }
        if stack.is_empty() && !names.is_empty() {
            return Err("second root element".into());
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(format!("bad element name {name:?}"));
        }
        // Attributes: key="value" pairs separated by spaces.
        let mut attrs = tag[name_end..].trim();
        while !attrs.is_empty() {
            let eq = attrs.find("=\"").ok_or(format!("unquoted attribute in <{tag}>"))?;
            let key = &attrs[..eq];
            if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':') {
                return Err(format!("bad attribute name {key:?}"));
            }
            let value_end = attrs[eq + 2..].find('"').ok_or("unterminated attribute")?;
            check_chars(&attrs[eq + 2..eq + 2 + value_end], "attribute")?;
            attrs = attrs[eq + 2 + value_end + 1..].trim_start();
        }
        names.push(name.to_owned());
        if !self_closing {
            stack.push(name.to_owned());
        }
    }
    check_chars(rest, "text")?;
    if !rest.trim().is_empty() {
        return Err("text after the root".into());
    }
    if let Some(open) = stack.pop() {
        return Err(format!("<{open}> never closed"));
    }
    if names.first().map(String::as_str) != Some("svg") {
        return Err("root is not <svg>".into());
    }
    Ok(names)
}

#[test]
fn checker_rejects_broken_documents() {
    let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    assert!(check_xml(&format!("{head}<svg><g></g></svg>\n")).is_ok());
    for bad in [
        "<svg><g></svg>",
        "<svg><text>a < b</text></svg>",
        "<svg><text>a & b</text></svg>",
        "<svg a=\"<\"/>",
        "<svg a=b/>",
        "<svg></svg><svg/>",
    ] {
        assert!(check_xml(&format!("{head}{bad}")).is_err(), "{bad}");
    }
}

fn noise(n: usize) -> Vec<f64> {
    (0..n).map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0).collect()
}

/// A figure that uses every kind of series, log axes, NaN and infinities.
fn kitchen_sink() -> Figure {
    let draws = noise(3000);
    let mut trace = noise(500);
    trace[100] = f64::NAN;
    trace[200] = f64::INFINITY;
    let evals = [1e2, 1e3, 1e4, 1e5, 1e6];
    let errors = [0.3, 0.1, f64::NAN, 0.01, 0.003];
    Figure::new()
        .with_title("Kitchen sink")
        .with_columns(2)
        .with_panel(
            Axes::new()
                .with_title("Trace")
                .with_x_label("iteration")
                .with_y_label("θ")
                .with_series(Line::trace(&trace).with_label("chain"))
                .with_series(RefLine::horizontal(0.5).with_label("truth")),
        )
        .with_panel(
            Axes::new()
                .with_title("Density")
                .with_series(Histogram::new(&draws, 25).with_label("draws"))
                .with_series(Line::from_fn(-1.0, 1.0, 50, |_| 0.5).with_label("uniform")),
        )
        .with_panel(
            Axes::new()
                .with_log_x()
                .with_log_y()
                .with_series(Line::new(&evals, &errors).with_marker(Marker::Square).with_label("a"))
                .with_series(Line::new(&evals, &[0.0, -1.0, 1.0, 2.0, 3.0]).with_dashes()),
        )
        .with_panel(
            Axes::new()
                .with_legend(Legend::BottomRight)
                .with_series(RefLine::identity())
                .with_series(
                    Scatter::new(&[1.0, 2.0, 3.0], &[1.1, 1.9, 3.2])
                        .with_y_errors(&[0.1, 0.2, 0.3]),
                ),
        )
        .with_panel(
            Axes::new()
                .with_log_y()
                .with_categories(["n = 10^4", "n = 10^5"])
                .with_series(Bars::new(&[3.0, 30.0]).with_label("MH"))
                .with_series(
                    Bars::new(&[10.0, f64::NAN]).with_label("SGLD").with_errors(&[1.0, 1.0]),
                ),
        )
}

#[test]
fn output_is_deterministic() {
    let a = kitchen_sink().to_svg();
    let b = kitchen_sink().to_svg();
    assert_eq!(a, b);
    assert_eq!(a, kitchen_sink().clone().to_svg());
    assert!(!a.contains("NaN") && !a.contains("inf"), "non-finite number leaked into the SVG");
}

#[test]
fn figures_are_well_formed() {
    let figures = [
        kitchen_sink(),
        Figure::new(),
        Figure::new().with_panel(Axes::new()),
        Figure::new().with_panel(Axes::new().with_title("empty").with_series(Line::new(&[], &[]))),
        Figure::new().with_panel(Axes::new().with_log_x().with_series(
            Scatter::new(&[-1.0, 0.0, f64::NAN], &[1.0, 2.0, 3.0]).with_label("nothing drawable"),
        )),
        Figure::new()
            .with_panel(Axes::new().with_series(Histogram::new(&[1.0, 2.0], vec![2.0, 1.0]))),
        Figure::new().with_panel(Axes::new().with_series(Histogram::new(&[], 10))),
        Figure::new().with_panel(Axes::new().with_series(Bars::new(&[]))),
        Figure::new().with_panel(Axes::new().with_categories(["only names"])),
    ];
    for (i, figure) in figures.iter().enumerate() {
        let svg = figure.to_svg();
        let names = check_xml(&svg).unwrap_or_else(|e| panic!("figure {i}: {e}\n{svg}"));
        assert_eq!(names[0], "svg");
    }
}

#[test]
fn text_is_escaped() {
    let nasty = "<b>x & y</b> \"quoted\" 'single'";
    let figure = Figure::new().with_title(nasty).with_panel(
        Axes::new()
            .with_title(nasty)
            .with_x_label(nasty)
            .with_y_label(nasty)
            .with_categories([nasty])
            .with_series(Bars::new(&[1.0]).with_label(nasty)),
    );
    let svg = figure.to_svg();
    check_xml(&svg).unwrap();
    assert!(!svg.contains("<b>") && !svg.contains("x & y"));
    let escaped = "&lt;b&gt;x &amp; y&lt;/b&gt; &quot;quoted&quot; &apos;single&apos;";
    // Figure title, panel title, two axis labels, category label and legend entry.
    assert_eq!(svg.matches(escaped).count(), 6);
}

/// The `points` attributes of the polylines stroked in `color` (plotters writes one polyline
/// per unbroken run of a line, and one per dash of a dashed line).
fn polylines_in(svg: &str, color: Color) -> Vec<Vec<(i32, i32)>> {
    let stroke = format!("stroke=\"{}\"", color.to_string().to_uppercase());
    svg.lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(&stroke))
        .filter_map(|l| l.split("points=\"").nth(1)?.split('"').next())
        .map(|points| {
            points
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').expect("x,y");
                    (x.parse().expect("x"), y.parse().expect("y"))
                })
                .collect()
        })
        .collect()
}

/// The contents of the `<text>` elements.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>')?.1.split("</text>").next())
        .map(str::trim)
        .collect()
}

#[test]
fn non_finite_points_break_lines() {
    let y = [1.0, 2.0, f64::NAN, 3.0, 4.0, f64::INFINITY, f64::NEG_INFINITY, 5.0, 6.0];
    let svg = Figure::new().with_panel(Axes::new().with_series(Line::trace(&y))).to_svg();
    let runs = polylines_in(&svg, PALETTE[0]);
    assert_eq!(runs.len(), 3, "{runs:?}");
    assert!(runs.iter().all(|run| run.len() == 2), "{runs:?}");
    // Increasing pieces, left to right.
    assert!(runs.windows(2).all(|w| w[0][1].0 < w[1][0].0 && w[0][1].1 > w[1][0].1), "{runs:?}");

    // On a log axis, non-positive values break the line too, and do not stretch the range.
    let y = [1.0, 10.0, 0.0, -5.0, 100.0, 1000.0];
    let axes = Axes::new().with_log_y().with_series(Line::trace(&y));
    let svg = Figure::new().with_panel(axes).to_svg();
    assert_eq!(polylines_in(&svg, PALETTE[0]).len(), 2);
    let labels = texts(&svg);
    assert!(labels.contains(&"10⁰") && labels.contains(&"10³"), "{labels:?}");
    assert!(!svg.contains('⁻'), "a negative decade on the axis: {labels:?}");
}

#[test]
fn lines_leaving_a_fixed_range_are_cut_at_the_frame() {
    let axes = Axes::new()
        .with_x_range(0.0, 10.0)
        .with_y_range(0.0, 1.0)
        .with_series(Line::new(&[0.0, 5.0, 10.0], &[0.5, 2.0, 0.5]));
    let svg = Figure::new().with_panel(axes).to_svg();
    let runs = polylines_in(&svg, PALETTE[0]);
    // Up to the top of the frame and back down from it: two pieces, not one flattened line.
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0][1].1, runs[1][0].1);
    assert!(runs[0][1].0 < runs[1][0].0, "{runs:?}");
}

#[test]
fn palette_cycles_per_series_and_skips_reference_lines() {
    let mut axes = Axes::new().with_series(RefLine::vertical(0.5));
    for k in 0..PALETTE.len() + 1 {
        axes.push(Line::new(&[0.0, 1.0], &[k as f64, k as f64 + 1.0]));
    }
    let svg = Figure::new().with_panel(axes).to_svg();
    for color in PALETTE {
        assert!(!polylines_in(&svg, color).is_empty(), "{color} unused");
    }
    // The ninth line wraps around to the first colour.
    assert_eq!(polylines_in(&svg, PALETTE[0]).len(), 2);
    // The reference line is grey and dashed: several dashes, all at one x.
    let dashes = polylines_in(&svg, Color::GREY);
    assert!(dashes.len() > 5, "{dashes:?}");
    assert!(dashes.iter().flatten().all(|p| p.0 == dashes[0][0].0), "{dashes:?}");
    assert_eq!(Color::rgb(0, 114, 178).to_string(), "#0072b2");
}

#[test]
fn grid_layout_and_size() {
    let mut figure = Figure::new();
    assert_eq!(figure.grid(), (1, 1));
    for _ in 0..5 {
        figure.push(Axes::new());
    }
    assert_eq!(figure.grid(), (3, 2));
    let figure = figure.with_columns(2).with_panel_size(300.0, 200.0).with_title("t");
    assert_eq!(figure.grid(), (2, 3));
    assert_eq!(figure.size(), (600.0, 632.0));
    assert!(figure.to_svg().contains("width=\"600\" height=\"632\" viewBox=\"0 0 600 632\""));
}

#[test]
fn categories_label_the_bars() {
    let axes = Axes::new()
        .with_categories(["MH", "austerity"])
        .with_series(Bars::new(&[10.0, 20.0, 30.0]));
    let svg = Figure::new().with_panel(axes).to_svg();
    let labels = texts(&svg);
    assert!(labels.contains(&"MH") && labels.contains(&"austerity"), "{labels:?}");
    // A third value without a name is numbered.
    assert!(labels.contains(&"3"), "{labels:?}");
}

#[test]
fn save_writes_the_svg() {
    let dir = std::env::temp_dir().join(format!("tallmc-reproduce-test-{}", std::process::id()));
    let path = dir.join("nested").join("fig.svg");
    let figure = kitchen_sink();
    figure.save(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), figure.to_svg());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Whether `step` is 1, 2 or 5 times a power of ten.
fn is_nice_step(step: f64) -> bool {
    let mantissa = step / 10f64.powf(step.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6)
}

#[test]
fn nice_ticks_cover_assorted_ranges() {
    let ranges = [
        (0.0, 1.0),
        (-1.0, 1.0),
        (-3.7, 12.1),
        (-1e-9, -2e-10),
        (1e-12, 3e-12),
        (0.999, 1.001),
        (1e6, 1e6 + 1.0),
        (-7e8, 3e9),
        (1e15, 1e16),
        (123.456, 123.456),
        (-1e250, 1e250),
    ];
    for (lo, hi) in ranges {
        for target in [2, 5, 8] {
            let t = Scale::Linear.auto_ticks(lo, hi, target);
            let what = format!("[{lo}, {hi}] target {target}: {t:?}");
            assert!(t.lo <= lo && t.hi >= hi, "{what}");
            assert!(t.major.len() >= 2 && t.major.len() <= 3 * target + 1, "{what}");
            assert_eq!(t.major.len(), t.labels.len(), "{what}");
            assert_eq!((t.major[0], *t.major.last().unwrap()), (t.lo, t.hi), "{what}");
            let step = t.major[1] - t.major[0];
            assert!(is_nice_step(step), "{what}");
            for w in t.major.windows(2) {
                assert!(((w[1] - w[0]) / step - 1.0).abs() < 1e-6, "{what}");
            }
            let labels: Vec<String> = t.labels.iter().map(TickLabel::to_plain_string).collect();
            let mut unique = labels.clone();
            unique.dedup();
            assert_eq!(unique, labels, "{what}");
        }
    }
}

#[test]
fn log_ticks_cover_assorted_ranges() {
    let ranges =
        [(1.0, 10.0), (0.5, 3e4), (1e-12, 1e-3), (2.0, 3.0), (1e-300, 1e300), (7e-5, 7e-5)];
    for (lo, hi) in ranges {
        let t = Scale::Log.auto_ticks(lo, hi, 6);
        let what = format!("[{lo}, {hi}]: {t:?}");
        assert!(t.lo > 0.0 && t.lo <= lo && t.hi >= hi, "{what}");
        assert!(t.major.len() >= 2 && t.major.len() <= 13, "{what}");
        assert!(t.major.iter().chain(&t.minor).all(|&v| v >= t.lo && v <= t.hi), "{what}");
        assert!(t.major.windows(2).all(|w| w[0] < w[1]), "{what}");
    }
    let t = Scale::Log.auto_ticks(0.5, 3e4, 6);
    let labels: Vec<String> = t.labels.iter().map(TickLabel::to_plain_string).collect();
    assert_eq!(labels, ["10^-1", "10^0", "10^1", "10^2", "10^3", "10^4", "10^5"]);
}
