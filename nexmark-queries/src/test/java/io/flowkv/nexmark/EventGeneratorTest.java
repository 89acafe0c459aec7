package io.flowkv.nexmark;

import io.flowkv.nexmark.EventSerializers.EventSerializer;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The generator against the NEXMark model, on a few hundred thousand events, without Flink. */
class EventGeneratorTest {

    private static final int N = 300_000;
    private static final GeneratorConfig CONFIG = GeneratorConfig.of(N, 10_000);
    private static final List<Event> EVENTS = new ArrayList<>(N);

    @BeforeAll
    static void generate() {
        EventGenerator generator = new EventGenerator(CONFIG);
        for (long n = 0; n < N; n++) {
            EVENTS.add(generator.event(n));
        }
    }

    @Test
    void shouldGeneratePersonsAuctionsAndBidsOneToThreeToFortySix() {
        long persons = 0;
        long auctions = 0;
        long bids = 0;
        for (int n = 0; n < N; n++) {
            Event e = EVENTS.get(n);
            int offset = n % 50;
            if (offset < 1) {
                assertThat(e).isInstanceOf(Person.class);
                persons++;
            } else if (offset < 4) {
                assertThat(e).isInstanceOf(Auction.class);
                auctions++;
            } else {
                assertThat(e).isInstanceOf(Bid.class);
                bids++;
            }
        }
        assertThat(persons).isEqualTo(N / 50);
        assertThat(auctions).isEqualTo(3L * N / 50);
        assertThat(bids).isEqualTo(46L * N / 50);
    }

    @Test
    void shouldNumberPersonsAndAuctionsConsecutivelyFromOneThousand() {
        long nextPerson = 1000;
        long nextAuction = 1000;
        for (Event e : EVENTS) {
            if (e instanceof Person p) {
                assertThat(p.id()).isEqualTo(nextPerson++);
            } else if (e instanceof Auction a) {
                assertThat(a.id()).isEqualTo(nextAuction++);
            }
        }
        assertThat(nextPerson - 1000).isEqualTo(N / 50);
        assertThat(nextAuction - 1000).isEqualTo(3L * N / 50);
    }

    @Test
    void shouldReferToRecentPersonsAndInFlightAuctions() {
        long lastPerson = 999;
        long lastAuction = 999;
        for (Event e : EVENTS) {
            if (e instanceof Person p) {
                lastPerson = p.id();
            } else if (e instanceof Auction a) {
                lastAuction = a.id();
                assertThat(a.seller()).isBetween(1000L, lastPerson + 10);
                assertThat(a.seller()).isGreaterThanOrEqualTo(lastPerson - 1000);
                assertThat(a.category()).isBetween(10L, 14L);
                assertThat(a.reserve()).isGreaterThan(a.initialBid());
                assertThat(a.expires()).isGreaterThan(a.dateTime());
            } else if (e instanceof Bid b) {
                assertThat(b.auction())
                        .isBetween(Math.max(1000, lastAuction - 100), lastAuction + 10);
                assertThat(b.bidder())
                        .isBetween(Math.max(1000, lastPerson - 1000), lastPerson + 10);
                assertThat(b.price()).isBetween(100L, 100_000_000L);
            }
        }
    }

    @Test
    void shouldSendBidsAndAuctionsToHotIdsAtTheConfiguredRatios() {
        long bids = 0;
        long hotAuction = 0;
        long hotBidder = 0;
        long auctions = 0;
        long hotSeller = 0;
        for (int n = 0; n < N; n++) {
            Event e = EVENTS.get(n);
            long hotPerson = EventGenerator.lastBase0PersonId(n) / 100 * 100 + 1000;
            if (e instanceof Bid b) {
                bids++;
                if (b.auction() == EventGenerator.lastBase0AuctionId(n) / 100 * 100 + 1000) {
                    hotAuction++;
                }
                if (b.bidder() == hotPerson + 1) {
                    hotBidder++;
                }
            } else if (e instanceof Auction a) {
                auctions++;
                if (a.seller() == hotPerson) {
                    hotSeller++;
                }
            }
        }
        // 1 - 1/ratio, plus the few uniform picks that land on the hot id by chance.
        assertThat((double) hotAuction / bids).isCloseTo(1 - 1 / 2.0, within(0.02));
        assertThat((double) hotBidder / bids).isCloseTo(1 - 1 / 4.0, within(0.02));
        assertThat((double) hotSeller / auctions).isCloseTo(1 - 1 / 4.0, within(0.02));
    }

    @Test
    void shouldPadEventsToTheAverageSizes() throws IOException {
        long[] bytes = new long[3];
        long[] counts = new long[3];
        DataOutputSerializer out = new DataOutputSerializer(1024);
        for (Event e : EVENTS) {
            out.clear();
            EventSerializer.INSTANCE.serialize(e, out);
            int size = out.length() - 1; // without the event tag
            int type = e instanceof Person ? 0 : e instanceof Auction ? 1 : 2;
            bytes[type] += size;
            counts[type]++;
        }
        assertThat((double) bytes[0] / counts[0]).isCloseTo(200, within(10.0));
        assertThat((double) bytes[1] / counts[1]).isCloseTo(500, within(25.0));
        assertThat((double) bytes[2] / counts[2]).isCloseTo(100, within(5.0));
    }

    @Test
    void shouldAssignEventTimeFromTheEventNumberAndRate() {
        for (int n = 0; n < N; n += 997) {
            assertThat(EVENTS.get(n).dateTime())
                    .isEqualTo(GeneratorConfig.DEFAULT_BASE_TIME + n * 1000L / 10_000);
        }
        for (int n = 1; n < N; n++) {
            assertThat(EVENTS.get(n).dateTime())
                    .isGreaterThanOrEqualTo(EVENTS.get(n - 1).dateTime());
        }
    }

    @Test
    void shouldGenerateTheSameEventForTheSameNumberInAnyOrder() {
        EventGenerator other = new EventGenerator(CONFIG);
        for (int n = N - 1; n >= 0; n -= 7) {
            assertThat(other.event(n)).isEqualTo(EVENTS.get(n));
        }
    }

    @Test
    void shouldRoundTripEventsThroughTheSerializer() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(1024);
        for (int n = 0; n < 5_000; n++) {
            out.clear();
            EventSerializer.INSTANCE.serialize(EVENTS.get(n), out);
            Event copy =
                    EventSerializer.INSTANCE.deserialize(
                            new DataInputDeserializer(out.getSharedBuffer(), 0, out.length()));
            assertThat(copy).isEqualTo(EVENTS.get(n));
        }
    }

    @Test
    void shouldCoverEveryEventOnceAcrossInterleavedSplits() {
        int count = 3;
        long[] seen = new long[2_000];
        GeneratorConfig config = GeneratorConfig.of(seen.length, 10_000);
        EventGenerator generator = new EventGenerator(config);
        for (int i = 0; i < count; i++) {
            var it = new NexmarkSplit(config, i, count, 0, 0).getIterator();
            long n = i;
            while (it.hasNext()) {
                assertThat(it.next()).isEqualTo(generator.event(n));
                seen[(int) n]++;
                n += count;
            }
        }
        assertThat(seen).containsOnly(1L);
    }
}
