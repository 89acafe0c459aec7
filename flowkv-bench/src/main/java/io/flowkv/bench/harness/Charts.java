package io.flowkv.bench.harness;

import javax.imageio.ImageIO;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The report's PNG plots, drawn with Java2D: grouped bars with min–max whiskers (and failed cells
 * marked, never left out), stacked bars, and line charts. Small on purpose: three chart shapes, no
 * styling options.
 */
final class Charts {

    static final Color[] PALETTE = {
        new Color(0x1f77b4),
        new Color(0xd62728),
        new Color(0x2ca02c),
        new Color(0x9467bd),
        new Color(0xff7f0e),
        new Color(0x8c564b),
        new Color(0x7f7f7f)
    };

    private static final int WIDTH = 1000;
    private static final int HEIGHT = 520;
    private static final int LEFT = 90;
    private static final int RIGHT = 30;
    private static final int TOP = 60;
    private static final int BOTTOM = 110;

    private Charts() {}

    /** One bar group's value of one series: median and range, or a failure label. */
    record Bar(double median, double min, double max, String failure) {
        static Bar failed(String why) {
            return new Bar(Double.NaN, Double.NaN, Double.NaN, why);
        }
    }

    /** Grouped bars: {@code bars[series][category]}, whiskers from min to max. */
    static void groupedBars(
            Path png,
            String title,
            String yLabel,
            List<String> categories,
            List<String> series,
            Bar[][] bars)
            throws IOException {
        double top = 0;
        for (Bar[] row : bars) {
            for (Bar b : row) {
                if (b != null && !Double.isNaN(b.max())) {
                    top = Math.max(top, b.max());
                }
            }
        }
        top = niceCeiling(top);
        Canvas c = new Canvas(title, yLabel, series);
        c.yAxis(0, top, false);
        double groupWidth = (double) c.plotWidth() / Math.max(1, categories.size());
        double barWidth = groupWidth * 0.8 / Math.max(1, series.size());
        for (int k = 0; k < categories.size(); k++) {
            double gx = LEFT + k * groupWidth;
            c.xLabel(categories.get(k), gx + groupWidth / 2);
            for (int s = 0; s < series.size(); s++) {
                Bar b = bars[s][k];
                if (b == null) {
                    continue;
                }
                int x = (int) (gx + groupWidth * 0.1 + s * barWidth);
                int w = (int) Math.max(1, barWidth - 2);
                Graphics2D g = c.g;
                if (b.failure() != null) {
                    g.setColor(PALETTE[s % PALETTE.length]);
                    g.drawRect(x, c.y(top) + 2, w, c.y(0) - c.y(top) - 2);
                    g.drawLine(x, c.y(top) + 2, x + w, c.y(0));
                    g.drawLine(x, c.y(0), x + w, c.y(top) + 2);
                    c.verticalText(b.failure(), x + w / 2, c.y(0) - 6, Color.BLACK);
                    continue;
                }
                g.setColor(PALETTE[s % PALETTE.length]);
                g.fillRect(x, c.y(b.median()), w, c.y(0) - c.y(b.median()));
                if (!Double.isNaN(b.min())) {
                    g.setColor(Color.BLACK);
                    g.setStroke(new BasicStroke(1.5f));
                    int mx = x + w / 2;
                    g.drawLine(mx, c.y(b.min()), mx, c.y(b.max()));
                    g.drawLine(mx - w / 4, c.y(b.min()), mx + w / 4, c.y(b.min()));
                    g.drawLine(mx - w / 4, c.y(b.max()), mx + w / 4, c.y(b.max()));
                    g.setStroke(new BasicStroke(1f));
                }
            }
        }
        c.save(png);
    }

    /** Stacked bars: {@code parts[part][category]}, each category's parts on top of each other. */
    static void stackedBars(
            Path png,
            String title,
            String yLabel,
            List<String> categories,
            List<String> partNames,
            double[][] parts)
            throws IOException {
        double top = 0;
        for (int k = 0; k < categories.size(); k++) {
            double sum = 0;
            for (double[] p : parts) {
                sum += Double.isNaN(p[k]) ? 0 : p[k];
            }
            top = Math.max(top, sum);
        }
        top = niceCeiling(top);
        Canvas c = new Canvas(title, yLabel, partNames);
        c.yAxis(0, top, false);
        double groupWidth = (double) c.plotWidth() / Math.max(1, categories.size());
        for (int k = 0; k < categories.size(); k++) {
            double gx = LEFT + k * groupWidth;
            c.xLabel(categories.get(k), gx + groupWidth / 2);
            double base = 0;
            int x = (int) (gx + groupWidth * 0.15);
            int w = (int) Math.max(1, groupWidth * 0.7);
            for (int p = 0; p < parts.length; p++) {
                double v = Double.isNaN(parts[p][k]) ? 0 : parts[p][k];
                c.g.setColor(PALETTE[p % PALETTE.length]);
                c.g.fillRect(x, c.y(base + v), w, c.y(base) - c.y(base + v));
                base += v;
            }
        }
        c.save(png);
    }

    /** One line of a line chart; a point with NaN y is skipped. */
    record Line(String name, double[] x, double[] y) {}

    static void lines(
            Path png, String title, String xLabel, String yLabel, List<Line> lines, boolean logY)
            throws IOException {
        double xMin = Double.MAX_VALUE;
        double xMax = -Double.MAX_VALUE;
        double yMin = Double.MAX_VALUE;
        double yMax = -Double.MAX_VALUE;
        for (Line l : lines) {
            for (int i = 0; i < l.x().length; i++) {
                if (Double.isNaN(l.y()[i]) || (logY && l.y()[i] <= 0)) {
                    continue;
                }
                xMin = Math.min(xMin, l.x()[i]);
                xMax = Math.max(xMax, l.x()[i]);
                yMin = Math.min(yMin, l.y()[i]);
                yMax = Math.max(yMax, l.y()[i]);
            }
        }
        if (xMin > xMax) {
            xMin = 0;
            xMax = 1;
            yMin = 1;
            yMax = 10;
        }
        if (xMax == xMin) {
            xMax = xMin + 1;
        }
        double lo = logY ? Math.pow(10, Math.floor(Math.log10(yMin))) : 0;
        double hi = logY ? Math.pow(10, Math.ceil(Math.log10(yMax))) : niceCeiling(yMax);
        if (hi <= lo) {
            hi = lo * 10 + 1;
        }
        Canvas c = new Canvas(title, yLabel, lines.stream().map(Line::name).toList());
        c.yAxis(lo, hi, logY);
        c.xAxis(xMin, xMax, xLabel);
        for (int s = 0; s < lines.size(); s++) {
            Line l = lines.get(s);
            c.g.setColor(PALETTE[s % PALETTE.length]);
            c.g.setStroke(new BasicStroke(2f));
            int px = -1;
            int py = -1;
            for (int i = 0; i < l.x().length; i++) {
                double y = l.y()[i];
                if (Double.isNaN(y) || (logY && y <= 0)) {
                    px = -1;
                    continue;
                }
                int x = c.x(l.x()[i], xMin, xMax);
                int yy = c.y(y);
                c.g.fillOval(x - 3, yy - 3, 7, 7);
                if (px >= 0) {
                    c.g.drawLine(px, py, x, yy);
                }
                px = x;
                py = yy;
            }
        }
        c.save(png);
    }

    static double niceCeiling(double v) {
        if (!(v > 0)) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10}) {
            if (m * p >= v * 1.05) {
                return m * p;
            }
        }
        return 10 * p;
    }

    static String tick(double v) {
        double a = Math.abs(v);
        if (a >= 1e6) {
            return String.format(Locale.ROOT, "%.3gM", v / 1e6);
        }
        if (a >= 1e3) {
            return String.format(Locale.ROOT, "%.3gk", v / 1e3);
        }
        return String.format(Locale.ROOT, "%.3g", v);
    }

    /** A white image with title, legend and axes. */
    private static final class Canvas {
        final BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        final Graphics2D g = image.createGraphics();
        double lo;
        double hi;
        boolean log;

        Canvas(String title, String yLabel, List<String> legend) {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(
                    RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(title, LEFT, 24);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            int lx = LEFT;
            for (int i = 0; i < legend.size(); i++) {
                g.setColor(PALETTE[i % PALETTE.length]);
                g.fillRect(lx, 36, 12, 12);
                g.setColor(Color.BLACK);
                g.drawString(legend.get(i), lx + 16, 47);
                lx += 28 + g.getFontMetrics().stringWidth(legend.get(i));
            }
            AffineTransform saved = g.getTransform();
            g.rotate(-Math.PI / 2);
            g.drawString(
                    yLabel,
                    -(TOP + plotHeight() / 2 + g.getFontMetrics().stringWidth(yLabel) / 2),
                    18);
            g.setTransform(saved);
        }

        int plotWidth() {
            return WIDTH - LEFT - RIGHT;
        }

        int plotHeight() {
            return HEIGHT - TOP - BOTTOM;
        }

        int y(double v) {
            double f =
                    log
                            ? (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))
                            : (v - lo) / (hi - lo);
            return (int) Math.round(TOP + plotHeight() * (1 - f));
        }

        int x(double v, double min, double max) {
            double pad = (max - min) * 0.04;
            return (int) Math.round(LEFT + plotWidth() * (v - min + pad) / (max - min + 2 * pad));
        }

        void yAxis(double lo, double hi, boolean log) {
            this.lo = lo;
            this.hi = hi;
            this.log = log;
            g.setColor(Color.BLACK);
            g.drawLine(LEFT, TOP, LEFT, TOP + plotHeight());
            g.drawLine(LEFT, TOP + plotHeight(), LEFT + plotWidth(), TOP + plotHeight());
            FontMetrics fm = g.getFontMetrics();
            if (log) {
                for (double v = lo; v <= hi * 1.0001; v *= 10) {
                    gridLine(v, fm);
                }
            } else {
                for (int i = 0; i <= 5; i++) {
                    gridLine(lo + (hi - lo) * i / 5, fm);
                }
            }
        }

        private void gridLine(double v, FontMetrics fm) {
            int yy = y(v);
            g.setColor(new Color(0xe0e0e0));
            g.drawLine(LEFT + 1, yy, LEFT + plotWidth(), yy);
            g.setColor(Color.BLACK);
            String t = tick(v);
            g.drawString(t, LEFT - 6 - fm.stringWidth(t), yy + 4);
        }

        void xAxis(double min, double max, String label) {
            FontMetrics fm = g.getFontMetrics();
            for (int i = 0; i <= 5; i++) {
                double v = min + (max - min) * i / 5;
                int xx = x(v, min, max);
                g.drawLine(xx, TOP + plotHeight(), xx, TOP + plotHeight() + 4);
                String t = tick(v);
                g.drawString(t, xx - fm.stringWidth(t) / 2, TOP + plotHeight() + 18);
            }
            g.drawString(
                    label,
                    LEFT + plotWidth() / 2 - fm.stringWidth(label) / 2,
                    TOP + plotHeight() + 40);
        }

        void xLabel(String text, double centre) {
            g.setColor(Color.BLACK);
            FontMetrics fm = g.getFontMetrics();
            AffineTransform saved = g.getTransform();
            g.translate(centre + 4, TOP + plotHeight() + 8);
            g.rotate(Math.PI / 6);
            g.drawString(text, 0, fm.getAscent() / 2);
            g.setTransform(saved);
        }

        void verticalText(String text, int x, int bottomY, Color color) {
            g.setColor(color);
            AffineTransform saved = g.getTransform();
            g.translate(x + 4, bottomY);
            g.rotate(-Math.PI / 2);
            g.drawString(text, 0, 0);
            g.setTransform(saved);
        }

        void save(Path png) throws IOException {
            g.dispose();
            Files.createDirectories(png.toAbsolutePath().getParent());
            ImageIO.write(image, "png", png.toFile());
        }
    }
}
