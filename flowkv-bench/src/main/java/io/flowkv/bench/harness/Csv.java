package io.flowkv.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Result CSVs: a header of {@link Column} names, one {@link Row} per line. Fields holding a comma,
 * quote or line break are quoted (RFC 4180); reading accepts columns in any order, so a file
 * written by an older harness with fewer columns still reads.
 */
final class Csv {

    private Csv() {}

    static String format(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        Column[] columns = Column.values();
        for (int i = 0; i < columns.length; i++) {
            sb.append(i == 0 ? "" : ",").append(columns[i].header());
        }
        sb.append('\n');
        for (Row row : rows) {
            for (int i = 0; i < columns.length; i++) {
                sb.append(i == 0 ? "" : ",").append(quote(row.get(columns[i])));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    static List<Row> parse(String text) {
        List<List<String>> records = records(text);
        List<Row> rows = new ArrayList<>();
        if (records.isEmpty()) {
            return rows;
        }
        List<Column> header = new ArrayList<>();
        for (String h : records.get(0)) {
            header.add(Column.ofHeader(h));
        }
        for (int r = 1; r < records.size(); r++) {
            List<String> fields = records.get(r);
            if (fields.size() != header.size()) {
                throw new IllegalArgumentException(
                        "CSV record "
                                + r
                                + " has "
                                + fields.size()
                                + " fields, the header "
                                + header.size());
            }
            Row row = new Row();
            for (int i = 0; i < fields.size(); i++) {
                row.set(header.get(i), fields.get(i));
            }
            rows.add(row);
        }
        return rows;
    }

    static void write(Path file, List<Row> rows) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, format(rows), StandardCharsets.UTF_8);
        Files.move(
                tmp,
                file,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    static List<Row> read(Path file) throws IOException {
        if (!Files.exists(file)) {
            return new ArrayList<>();
        }
        try {
            return parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    static String quote(String v) {
        if (v.indexOf(',') < 0
                && v.indexOf('"') < 0
                && v.indexOf('\n') < 0
                && v.indexOf('\r') < 0) {
            return v;
        }
        return '"' + v.replace("\"", "\"\"") + '"';
    }

    private static List<List<String>> records(String text) {
        List<List<String>> records = new ArrayList<>();
        List<String> fields = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        boolean any = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '"') {
                    if (i + 1 < text.length() && text.charAt(i + 1) == '"') {
                        field.append('"');
                        i++;
                    } else {
                        quoted = false;
                    }
                } else {
                    field.append(c);
                }
                continue;
            }
            switch (c) {
                case '"' -> {
                    quoted = true;
                    any = true;
                }
                case ',' -> {
                    fields.add(field.toString());
                    field.setLength(0);
                    any = true;
                }
                case '\r' -> {}
                case '\n' -> {
                    if (any || field.length() > 0) {
                        fields.add(field.toString());
                        records.add(fields);
                    }
                    fields = new ArrayList<>();
                    field.setLength(0);
                    any = false;
                }
                default -> {
                    field.append(c);
                    any = true;
                }
            }
        }
        if (quoted) {
            throw new IllegalArgumentException("CSV ends inside a quoted field");
        }
        if (any || field.length() > 0) {
            fields.add(field.toString());
            records.add(fields);
        }
        return records;
    }
}
