package io.flowkv.nexmark.sql;

import org.apache.flink.table.functions.ScalarFunction;

/** q14's {@code count_char(s, c)}: how many times the character {@code c} occurs in {@code s}. */
public final class CountChar extends ScalarFunction {
    private static final long serialVersionUID = 1L;

    public long eval(String s, String c) {
        if (s == null || c == null || c.isEmpty()) {
            return 0;
        }
        char ch = c.charAt(0);
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == ch) {
                n++;
            }
        }
        return n;
    }
}
