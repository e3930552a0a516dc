//! Renders a terminal screen (as vt100 parsed it) to SVG, for the pictures in `assets/`.

const CELL_W: f64 = 8.4;
const CELL_H: f64 = 17.0;
const FOREGROUND: &str = "#d0d0d0";
const BACKGROUND: &str = "#1c1c1c";

/// The xterm palette for the 16 basic colours.
const ANSI: [&str; 16] = [
    "#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
];

fn color(color: vt100::Color, default: &str) -> String {
    match color {
        vt100::Color::Default => default.to_string(),
        vt100::Color::Idx(i) if i < 16 => ANSI[usize::from(i)].to_string(),
        vt100::Color::Idx(i) if i >= 232 => {
            let level = 8 + 10 * (u32::from(i) - 232);
            format!("#{level:02x}{level:02x}{level:02x}")
        }
        vt100::Color::Idx(i) => {
            let i = u32::from(i) - 16;
            let scale = |v: u32| if v == 0 { 0 } else { 55 + 40 * v };
            format!(
                "#{:02x}{:02x}{:02x}",
                scale(i / 36),
                scale((i / 6) % 6),
                scale(i % 6)
            )
        }
        vt100::Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One SVG document of the whole screen.
pub fn render(screen: &vt100::Screen, title: &str) -> String {
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    let width = f64::from(cols) * CELL_W + 16.0;
    let height = f64::from(rows) * CELL_H + 16.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"14\">\n\
         <title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"{BACKGROUND}\" rx=\"6\"/>\n",
        escape(title)
    );
    for row in 0..rows {
        let y = 8.0 + f64::from(row) * CELL_H;
        for col in 0..cols {
            let Some(cell) = screen.cell(row, col) else {
                continue;
            };
            let (mut fg, mut bg) = (
                color(cell.fgcolor(), FOREGROUND),
                color(cell.bgcolor(), BACKGROUND),
            );
            if cell.inverse() {
                std::mem::swap(&mut fg, &mut bg);
            }
            let x = 8.0 + f64::from(col) * CELL_W;
            if bg != BACKGROUND {
                let w = if cell.is_wide() { 2.0 * CELL_W } else { CELL_W };
                out.push_str(&format!(
                    "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{CELL_H}\" fill=\"{bg}\"/>\n"
                ));
            }
            let text = cell.contents();
            if text.trim().is_empty() {
                continue;
            }
            let weight = if cell.bold() {
                " font-weight=\"bold\""
            } else {
                ""
            };
            out.push_str(&format!(
                "<text x=\"{x:.1}\" y=\"{:.1}\" fill=\"{fg}\"{weight}>{}</text>\n",
                y + CELL_H - 4.0,
                escape(text)
            ));
        }
    }
    out.push_str("</svg>\n");
    out
}
