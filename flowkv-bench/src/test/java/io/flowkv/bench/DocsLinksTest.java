package io.flowkv.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the repository's Markdown files names a file or directory that exists. The
 * figures in docs/ point at their raw results (CSVs, logs, profiles, plots): on a clean checkout,
 * as CI builds it, a link to a file that was never committed (an ignored {@code *.log}, a profile
 * left in a run directory) fails here.
 */
class DocsLinksTest {

    /** {@code [text](target)} and {@code ![alt](target)}: the target up to whitespace or ')'. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    @Test
    void shouldResolveEveryRelativeLinkOfTheDocs() throws IOException {
        Path root = repositoryRoot();
        List<String> dangling = new ArrayList<>();
        int links = danglingLinks(root, dangling);
        assertThat(links).as("relative links found").isGreaterThan(100);
        assertThat(dangling).as("links to files that do not exist").isEmpty();
    }

    @Test
    void shouldFindALinkToAMissingFile(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("a.md"), "see [the log](missing.log) and [b](b.md)\n");
        Files.writeString(
                dir.resolve("b.md"),
                "[back](a.md#top), [web](https://flink.apache.org), [x](#y)\n");
        List<String> dangling = new ArrayList<>();
        assertThat(danglingLinks(dir, dangling)).isEqualTo(3);
        assertThat(dangling).containsExactly("a.md -> missing.log");
    }

    /**
     * Adds to {@code dangling} every relative link under {@code root} whose target does not exist
     * ("file -> target"); returns how many relative links there are.
     */
    private static int danglingLinks(Path root, List<String> dangling) throws IOException {
        int links = 0;
        for (Path md : markdownFiles(root)) {
            Matcher m = LINK.matcher(Files.readString(md));
            while (m.find()) {
                String target = m.group(1);
                int hash = target.indexOf('#');
                String path = hash < 0 ? target : target.substring(0, hash);
                if (path.isEmpty() || path.matches("[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue; // an anchor in the same file, or a URL
                }
                links++;
                if (!Files.exists(md.getParent().resolve(path).normalize())) {
                    dangling.add(root.relativize(md) + " -> " + target);
                }
            }
        }
        return links;
    }

    /** The directory above this module that holds docs/ and README.md. */
    private static Path repositoryRoot() {
        Path root = Path.of("").toAbsolutePath().getParent();
        assertThat(root.resolve("docs").resolve("benchmarks")).isDirectory();
        assertThat(root.resolve("README.md")).isRegularFile();
        return root;
    }

    /** Markdown files under {@code root}, build output and version control left out. */
    private static List<Path> markdownFiles(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.toString().endsWith(".md"))
                    .filter(
                            p -> {
                                String rel = root.relativize(p).toString();
                                return !rel.startsWith(".git")
                                        && !rel.contains("/target/")
                                        && !rel.startsWith("target/");
                            })
                    .sorted()
                    .toList();
        }
    }
}
