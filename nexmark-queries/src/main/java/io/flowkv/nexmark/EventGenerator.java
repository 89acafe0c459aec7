package io.flowkv.nexmark;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The NEXMark event model (after the generator of Apache Beam's NEXMark suite): event {@code n} is
 * a pure function of {@code n} and the configuration, so any subset of the stream can be produced
 * by any reader in any order, and every run is reproducible.
 *
 * <p>Events come in epochs of 50: 1 person, 3 auctions, 46 bids. Person and auction ids count the
 * persons and auctions generated so far, offset by {@value #FIRST_PERSON_ID} and {@value
 * #FIRST_AUCTION_ID}. A bid goes to the current hot auction (the latest multiple of 100 of auction
 * ids) with probability {@code 1 - 1/hotAuctionRatio}, else to one of the last {@value
 * #IN_FLIGHT_AUCTIONS} auctions; its bidder is a hot person with probability {@code 1 -
 * 1/hotBiddersRatio}, else one of the last {@value #ACTIVE_PEOPLE} people. Prices are {@code
 * 10^(U*6) * 100} cents, U uniform in [0, 1).
 */
public final class EventGenerator {

    static final int PERSON_PROPORTION = 1;
    static final int AUCTION_PROPORTION = 3;
    static final int BID_PROPORTION = 46;
    static final int PROPORTION_DENOMINATOR =
            PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION;

    static final long FIRST_PERSON_ID = 1000;
    static final long FIRST_AUCTION_ID = 1000;
    static final int FIRST_CATEGORY_ID = 10;
    static final int NUM_CATEGORIES = 5;
    static final int IN_FLIGHT_AUCTIONS = 100;
    static final int ACTIVE_PEOPLE = 1000;

    /** Hot auctions, bidders and sellers are the latest multiples of this among the ids so far. */
    static final int HOT_GROUP = 100;

    /** Bids and auctions may name persons and auctions up to this far ahead of the stream. */
    static final int PERSON_ID_LEAD = 10;

    static final int AUCTION_ID_LEAD = 10;

    private static final String[] FIRST_NAMES = {
        "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter",
        "Walter"
    };
    private static final String[] LAST_NAMES = {
        "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"
    };
    private static final String[] CITIES = {
        "Phoenix",
        "Los Angeles",
        "San Francisco",
        "Boise",
        "Portland",
        "Bend",
        "Redmond",
        "Seattle",
        "Kent",
        "Cheyenne"
    };
    private static final String[] STATES = {"AZ", "CA", "ID", "OR", "WA", "WY"};
    private static final String[] CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};

    private final GeneratorConfig config;

    public EventGenerator(GeneratorConfig config) {
        this.config = config;
    }

    public GeneratorConfig config() {
        return config;
    }

    /** Event number {@code n} of the stream. */
    public Event event(long n) {
        SplittableRandom random = new SplittableRandom(mix64(n));
        long timestamp = config.timestampOf(n);
        long offset = n % PROPORTION_DENOMINATOR;
        if (offset < PERSON_PROPORTION) {
            return person(n, random, timestamp);
        } else if (offset < PERSON_PROPORTION + AUCTION_PROPORTION) {
            return auction(n, random, timestamp);
        } else {
            return bid(n, random, timestamp);
        }
    }

    private Person person(long n, SplittableRandom random, long timestamp) {
        long id = lastBase0PersonId(n) + FIRST_PERSON_ID;
        String name = pick(random, FIRST_NAMES) + " " + pick(random, LAST_NAMES);
        String email = letters(random, 7) + "@" + letters(random, 5) + ".com";
        String creditCard =
                digits(random, 4)
                        + " "
                        + digits(random, 4)
                        + " "
                        + digits(random, 4)
                        + " "
                        + digits(random, 4);
        String city = pick(random, CITIES);
        String state = pick(random, STATES);
        Person unpadded = new Person(id, name, email, creditCard, city, state, timestamp, "");
        String extra = extra(random, EventSerializers.size(unpadded), config.avgPersonBytes());
        return new Person(id, name, email, creditCard, city, state, timestamp, extra);
    }

    private Auction auction(long n, SplittableRandom random, long timestamp) {
        long id = lastBase0AuctionId(n) + FIRST_AUCTION_ID;
        long seller;
        if (random.nextInt(config.hotSellersRatio()) > 0) {
            seller = (lastBase0PersonId(n) / HOT_GROUP) * HOT_GROUP;
        } else {
            seller = nextBase0PersonId(n, random);
        }
        seller += FIRST_PERSON_ID;
        long category = FIRST_CATEGORY_ID + random.nextInt(NUM_CATEGORIES);
        long initialBid = nextPrice(random);
        long reserve = initialBid + nextPrice(random);
        // An auction stays open about as long as it takes the stream to open IN_FLIGHT_AUCTIONS
        // more auctions.
        long openEvents = (long) IN_FLIGHT_AUCTIONS * PROPORTION_DENOMINATOR / AUCTION_PROPORTION;
        long expires = config.timestampOf(n + openEvents + random.nextLong(openEvents));
        String itemName = letters(random, 5 + random.nextInt(16));
        String description = letters(random, 30 + random.nextInt(71));
        Auction unpadded =
                new Auction(
                        id,
                        itemName,
                        description,
                        initialBid,
                        reserve,
                        timestamp,
                        expires,
                        seller,
                        category,
                        "");
        String extra = extra(random, EventSerializers.size(unpadded), config.avgAuctionBytes());
        return new Auction(
                id,
                itemName,
                description,
                initialBid,
                reserve,
                timestamp,
                expires,
                seller,
                category,
                extra);
    }

    private Bid bid(long n, SplittableRandom random, long timestamp) {
        long auction;
        if (random.nextInt(config.hotAuctionRatio()) > 0) {
            auction = (lastBase0AuctionId(n) / HOT_GROUP) * HOT_GROUP;
        } else {
            auction = nextBase0AuctionId(n, random);
        }
        auction += FIRST_AUCTION_ID;
        long bidder;
        if (random.nextInt(config.hotBiddersRatio()) > 0) {
            // Hot bidders are one above the hot sellers, as in Beam's model.
            bidder = (lastBase0PersonId(n) / HOT_GROUP) * HOT_GROUP + 1;
        } else {
            bidder = nextBase0PersonId(n, random);
        }
        bidder += FIRST_PERSON_ID;
        long price = nextPrice(random);
        int c = random.nextInt(CHANNELS.length + 1);
        String channel = c < CHANNELS.length ? CHANNELS[c] : "ch-" + random.nextInt(10_000);
        String url = "https://nexmark.com/" + letters(random, 5);
        Bid unpadded = new Bid(auction, bidder, price, channel, url, timestamp, "");
        String extra = extra(random, EventSerializers.size(unpadded), config.avgBidBytes());
        return new Bid(auction, bidder, price, channel, url, timestamp, extra);
    }

    /** Id (0-based) of the last person generated at or before event {@code n}. */
    static long lastBase0PersonId(long n) {
        long epoch = n / PROPORTION_DENOMINATOR;
        long offset = n % PROPORTION_DENOMINATOR;
        if (offset >= PERSON_PROPORTION) {
            offset = PERSON_PROPORTION - 1;
        }
        return epoch * PERSON_PROPORTION + offset;
    }

    /** Id (0-based) of the last auction generated at or before event {@code n}; -1 if none. */
    static long lastBase0AuctionId(long n) {
        long epoch = n / PROPORTION_DENOMINATOR;
        long offset = n % PROPORTION_DENOMINATOR;
        if (offset < PERSON_PROPORTION) {
            epoch--;
            offset = AUCTION_PROPORTION - 1;
        } else if (offset >= PERSON_PROPORTION + AUCTION_PROPORTION) {
            offset = AUCTION_PROPORTION - 1;
        } else {
            offset -= PERSON_PROPORTION;
        }
        return epoch * AUCTION_PROPORTION + offset;
    }

    /** One of the last {@value #ACTIVE_PEOPLE} people, or a little ahead of them. */
    static long nextBase0PersonId(long n, SplittableRandom random) {
        long numPeople = lastBase0PersonId(n) + 1;
        long activePeople = Math.min(numPeople, ACTIVE_PEOPLE);
        return numPeople - activePeople + random.nextLong(activePeople + PERSON_ID_LEAD);
    }

    /** One of the last {@value #IN_FLIGHT_AUCTIONS} auctions, or a little ahead of them. */
    static long nextBase0AuctionId(long n, SplittableRandom random) {
        long maxAuction = Math.max(lastBase0AuctionId(n), 0);
        long minAuction = Math.max(maxAuction - IN_FLIGHT_AUCTIONS, 0);
        return minAuction + random.nextLong(maxAuction - minAuction + 1 + AUCTION_ID_LEAD);
    }

    static long nextPrice(SplittableRandom random) {
        return Math.round(Math.pow(10.0, random.nextDouble() * 6.0) * 100.0);
    }

    /** Padding that brings the average size to {@code desired}, varying by +-20%. */
    private static String extra(SplittableRandom random, int currentSize, int desired) {
        if (currentSize >= desired) {
            return "";
        }
        int avgExtra = desired - currentSize;
        int delta = (int) Math.round(avgExtra * 0.2);
        if (delta > 0) {
            avgExtra += random.nextInt(2 * delta + 1) - delta;
        }
        return letters(random, avgExtra);
    }

    private static String pick(SplittableRandom random, String[] values) {
        return values[random.nextInt(values.length)];
    }

    /**
     * {@code length} random lower-case letters: a slice of {@link #LETTERS} at a random offset. The
     * padding of every event is made here, so drawing each letter would make the generator a large
     * share of a query's cost; the slice keeps it one draw and one copy per string.
     */
    private static String letters(SplittableRandom random, int length) {
        if (length > LETTERS.length) {
            StringBuilder sb = new StringBuilder(length);
            while (sb.length() < length) {
                sb.append(letters(random, Math.min(LETTERS.length, length - sb.length())));
            }
            return sb.toString();
        }
        int from = random.nextInt(LETTERS.length - length + 1);
        return new String(LETTERS, from, length, StandardCharsets.ISO_8859_1);
    }

    /** Random lower-case letters from a fixed seed, the source of every generated string. */
    private static final byte[] LETTERS = new byte[1 << 16];

    static {
        SplittableRandom random = new SplittableRandom(0x6e65786d61726bL);
        for (int i = 0; i < LETTERS.length; i++) {
            LETTERS[i] = (byte) ('a' + random.nextInt(26));
        }
    }

    private static String digits(SplittableRandom random, int length) {
        char[] chars = new char[length];
        for (int i = 0; i < length; i++) {
            chars[i] = (char) ('0' + random.nextInt(10));
        }
        return new String(chars);
    }

    /** Stafford variant 13 of the 64-bit finalizer: well-spread seeds from consecutive ids. */
    public static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
