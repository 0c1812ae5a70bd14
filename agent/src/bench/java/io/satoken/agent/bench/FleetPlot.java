package io.satoken.agent.bench;

import java.util.List;
import java.util.Locale;

/**
 * The fleet model's plot: for each scenario, the busiest second of each minute, TokenRequests per second on a
 * logarithmic axis, over the simulated hours. An SVG written by hand: a few polylines need no plotting library.
 */
final class FleetPlot {

    private static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
    private static final int WIDTH = 960;
    private static final int HEIGHT = 420;
    private static final int LEFT = 70;
    private static final int RIGHT = 20;
    private static final int TOP = 40;
    private static final int BOTTOM = 70;

    private FleetPlot() {
    }

    static String svg(List<FleetModel.Result> results, List<FleetModel.Histogram> histograms, int nodes, int pods) {
        int minutes = histograms.isEmpty() ? 1 : histograms.get(0).sent.length / 60;
        int maxRate = 1;
        for (FleetModel.Histogram h : histograms) {
            for (int v : h.sent) {
                maxRate = Math.max(maxRate, v);
            }
        }
        int decades = (int) Math.ceil(Math.log10(maxRate + 1));
        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                + " font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\">TokenRequests per second, busiest second of each"
                + " minute: %,d nodes x %d pods</text>%n", LEFT, nodes, pods));
        for (int d = 0; d <= decades; d++) {
            double y = TOP + plotH - plotH * d / decades;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
                    LEFT, WIDTH - RIGHT, y, y, LEFT - 6, y + 4, d == 0 ? "0" : "1e" + d));
        }
        int hours = minutes / 60;
        for (int h = 0; h <= hours; h += 6) {
            double x = LEFT + plotW * h * 60 / minutes;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d h</text>%n",
                    x, x, TOP, TOP + plotH, x, TOP + plotH + 16, h));
        }
        for (int i = 0; i < histograms.size(); i++) {
            int[] sent = histograms.get(i).sent;
            StringBuilder points = new StringBuilder();
            for (int m = 0; m < minutes; m++) {
                int peak = 0;
                for (int s = m * 60; s < m * 60 + 60 && s < sent.length; s++) {
                    peak = Math.max(peak, sent[s]);
                }
                double x = LEFT + plotW * m / minutes;
                double y = TOP + plotH - plotH * Math.log10(peak + 1) / decades;
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            }
            String colour = COLOURS[i % COLOURS.length];
            svg.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1\" points=\"%s\"/>%n",
                    colour, points.toString().strip()));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s (storm factor %.1f)</text>%n",
                    LEFT + 10 + (i % 2) * 300, HEIGHT - 22 + (i / 2) * 14 - 8, colour, results.get(i).scenario().name(),
                    results.get(i).stormFactor()));
        }
        svg.append("</svg>\n");
        return svg.toString();
    }
}
