package io.flowkv.nexmark.sql;

import io.flowkv.nexmark.Auction;
import io.flowkv.nexmark.Bid;
import io.flowkv.nexmark.Event;
import io.flowkv.nexmark.GeneratorConfig;
import io.flowkv.nexmark.Person;
import io.flowkv.nexmark.Queries;
import io.flowkv.nexmark.QueryParams;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

import java.time.Instant;
import java.time.ZoneOffset;

/**
 * The nexmark-flink SQL queries over the project's own generator.
 *
 * <p>The generator's events are split into three streams of rows and registered as the tables
 * {@code person}, {@code auction} and {@code bid} (the suite's column names). Each has a {@code
 * dateTime TIMESTAMP_LTZ(3)} rowtime column taken from the stream record's timestamp (the event
 * time) and the source's own watermarks ({@code SOURCE_WATERMARK()}), so the SQL jobs see the same
 * time and the same determinism as the DataStream queries. The session time zone is UTC.
 */
public final class SqlQueries {

    private SqlQueries() {}

    /** The SQL text of {@code query} (one statement). */
    public static String sql(SqlQuery query) {
        return switch (query) {
            case Q0 -> "SELECT auction, bidder, price, `dateTime`, extra FROM bid";
            case Q1 -> "SELECT auction, bidder, 0.908 * price AS price, `dateTime`, extra FROM bid";
            case Q2 -> "SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0";
            case Q3 ->
                    "SELECT P.name, P.city, P.state, A.id FROM auction AS A"
                            + " INNER JOIN person AS P ON A.seller = P.id"
                            + " WHERE A.category = 10"
                            + " AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')";
            case Q4 ->
                    "SELECT Q.category, AVG(Q.final) AS avg_final FROM ("
                            + " SELECT MAX(B.price) AS final, A.category"
                            + " FROM auction AS A, bid AS B"
                            + " WHERE A.id = B.auction"
                            + " AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires"
                            + " GROUP BY A.id, A.category) AS Q"
                            + " GROUP BY Q.category";
            case Q5 ->
                    "SELECT AB.auction, AB.num FROM ("
                            + " SELECT auction, COUNT(*) AS num,"
                            + " window_start AS starttime, window_end AS endtime"
                            + " FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`),"
                            + " INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
                            + " GROUP BY auction, window_start, window_end) AS AB"
                            + " JOIN ("
                            + " SELECT MAX(CB.num) AS maxn, CB.starttime, CB.endtime FROM ("
                            + " SELECT COUNT(*) AS num,"
                            + " window_start AS starttime, window_end AS endtime"
                            + " FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`),"
                            + " INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
                            + " GROUP BY auction, window_start, window_end) AS CB"
                            + " GROUP BY CB.starttime, CB.endtime) AS MB"
                            + " ON AB.starttime = MB.starttime AND AB.endtime = MB.endtime"
                            + " AND AB.num >= MB.maxn";
            case Q7 ->
                    "SELECT B.auction, B.price, B.bidder, B.`dateTime`, B.extra FROM bid AS B"
                            + " JOIN ("
                            + " SELECT MAX(price) AS maxprice, window_end AS `dateTime`"
                            + " FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`),"
                            + " INTERVAL '10' SECOND))"
                            + " GROUP BY window_start, window_end) AS B1"
                            + " ON B.price = B1.maxprice"
                            + " WHERE B.`dateTime` BETWEEN B1.`dateTime` - INTERVAL '10' SECOND"
                            + " AND B1.`dateTime`";
            case Q8 ->
                    "SELECT P.id, P.name, P.starttime FROM ("
                            + " SELECT id, name, window_start AS starttime, window_end AS endtime"
                            + " FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(`dateTime`),"
                            + " INTERVAL '10' SECOND))"
                            + " GROUP BY id, name, window_start, window_end) AS P"
                            + " JOIN ("
                            + " SELECT seller, window_start AS starttime, window_end AS endtime"
                            + " FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`),"
                            + " INTERVAL '10' SECOND))"
                            + " GROUP BY seller, window_start, window_end) AS A"
                            + " ON P.id = A.seller AND P.starttime = A.starttime"
                            + " AND P.endtime = A.endtime";
            case Q9 ->
                    "SELECT id, itemName, description, initialBid, reserve, `dateTime`, expires,"
                            + " seller, category, extra, auction, bidder, price, bid_dateTime,"
                            + " bid_extra FROM ("
                            + " SELECT A.id, A.itemName, A.description, A.initialBid, A.reserve,"
                            + " CAST(A.`dateTime` AS TIMESTAMP(3)) AS `dateTime`, A.expires,"
                            + " A.seller, A.category, A.extra, B.auction, B.bidder, B.price,"
                            + " CAST(B.`dateTime` AS TIMESTAMP(3)) AS bid_dateTime,"
                            + " B.extra AS bid_extra,"
                            + " ROW_NUMBER() OVER (PARTITION BY A.id"
                            + " ORDER BY B.price DESC, B.`dateTime` ASC) AS rownum"
                            + " FROM auction AS A, bid AS B"
                            + " WHERE A.id = B.auction"
                            + " AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires)"
                            + " WHERE rownum <= 1";
            case Q11 ->
                    "SELECT bidder, COUNT(*) AS bid_count,"
                            + " window_start AS starttime, window_end AS endtime"
                            + " FROM TABLE(SESSION(TABLE bid PARTITION BY bidder,"
                            + " DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))"
                            + " GROUP BY bidder, window_start, window_end";
            case Q12 ->
                    "SELECT bidder, COUNT(*) AS bid_count,"
                            + " window_start AS starttime, window_end AS endtime"
                            + " FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`),"
                            + " INTERVAL '10' SECOND))"
                            + " GROUP BY bidder, window_start, window_end";
            case Q14 ->
                    "SELECT auction, bidder, 0.908 * price AS price,"
                            + " CASE"
                            + " WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'"
                            + " WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'"
                            + " ELSE 'otherTime' END AS bidTimeType,"
                            + " `dateTime`, extra, count_char(extra, 'c') AS c_counts"
                            + " FROM bid"
                            + " WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000";
            case Q15 ->
                    "SELECT DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') AS `day`,"
                            + " COUNT(*) AS total_bids,"
                            + bidCounts()
                            + " FROM bid GROUP BY DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')";
            case Q16 ->
                    "SELECT channel, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') AS `day`,"
                            + " MAX(DATE_FORMAT(`dateTime`, 'HH:mm')) AS `minute`,"
                            + " COUNT(*) AS total_bids,"
                            + bidCounts()
                            + " FROM bid GROUP BY channel, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')";
            case Q17 ->
                    "SELECT auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') AS `day`,"
                            + " COUNT(*) AS total_bids,"
                            + " COUNT(*) FILTER (WHERE price < 10000) AS rank1_bids,"
                            + " COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000)"
                            + " AS rank2_bids,"
                            + " COUNT(*) FILTER (WHERE price >= 1000000) AS rank3_bids,"
                            + " MIN(price) AS min_price, MAX(price) AS max_price,"
                            + " AVG(price) AS avg_price, SUM(price) AS sum_price"
                            + " FROM bid GROUP BY auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')";
            case Q18 ->
                    "SELECT auction, bidder, price, channel, url, `dateTime`, extra FROM ("
                            + " SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction"
                            + " ORDER BY `dateTime` DESC) AS rank_number FROM bid)"
                            + " WHERE rank_number <= 1";
            case Q19 ->
                    "SELECT * FROM ("
                            + " SELECT *, ROW_NUMBER() OVER (PARTITION BY auction"
                            + " ORDER BY price DESC) AS rank_number FROM bid)"
                            + " WHERE rank_number <= 10";
            case Q20 ->
                    "SELECT auction, bidder, price, channel, url,"
                            + " CAST(B.`dateTime` AS TIMESTAMP(3)) AS bid_dateTime,"
                            + " B.extra AS bid_extra, itemName, description, initialBid, reserve,"
                            + " CAST(A.`dateTime` AS TIMESTAMP(3)) AS auction_dateTime, expires,"
                            + " seller, category, A.extra AS auction_extra"
                            + " FROM bid AS B INNER JOIN auction AS A ON B.auction = A.id"
                            + " WHERE A.category = 10";
            case Q21 ->
                    "SELECT auction, bidder, price, channel,"
                            + " CASE WHEN LOWER(channel) = 'apple' THEN '0'"
                            + " WHEN LOWER(channel) = 'google' THEN '1'"
                            + " WHEN LOWER(channel) = 'facebook' THEN '2'"
                            + " WHEN LOWER(channel) = 'baidu' THEN '3'"
                            + " ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)"
                            + " END AS channel_id FROM bid"
                            + " WHERE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) IS NOT NULL"
                            + " OR LOWER(channel) IN ('apple', 'google', 'facebook', 'baidu')";
            case Q22 ->
                    "SELECT auction, bidder, price, channel,"
                            + " SPLIT_INDEX(url, '/', 3) AS dir1,"
                            + " SPLIT_INDEX(url, '/', 4) AS dir2,"
                            + " SPLIT_INDEX(url, '/', 5) AS dir3 FROM bid";
        };
    }

    /** q15/q16's price-band and distinct bidder/auction counts. */
    private static String bidCounts() {
        StringBuilder s = new StringBuilder();
        String[] bands = {
            "price < 10000", "price >= 10000 AND price < 1000000", "price >= 1000000"
        };
        s.append(" COUNT(*) FILTER (WHERE ").append(bands[0]).append(") AS rank1_bids,");
        s.append(" COUNT(*) FILTER (WHERE ").append(bands[1]).append(") AS rank2_bids,");
        s.append(" COUNT(*) FILTER (WHERE ").append(bands[2]).append(") AS rank3_bids,");
        s.append(" COUNT(DISTINCT bidder) AS total_bidders,");
        for (int i = 0; i < 3; i++) {
            s.append(" COUNT(DISTINCT bidder) FILTER (WHERE ")
                    .append(bands[i])
                    .append(") AS rank")
                    .append(i + 1)
                    .append("_bidders,");
        }
        s.append(" COUNT(DISTINCT auction) AS total_auctions,");
        for (int i = 0; i < 3; i++) {
            s.append(" COUNT(DISTINCT auction) FILTER (WHERE ")
                    .append(bands[i])
                    .append(") AS rank")
                    .append(i + 1)
                    .append("_auctions");
            s.append(i < 2 ? "," : "");
        }
        return s.toString();
    }

    /** A table environment over {@code env} with {@code person}, {@code auction}, {@code bid}. */
    public static StreamTableEnvironment tables(
            StreamExecutionEnvironment env,
            GeneratorConfig generator,
            double maxRate,
            QueryParams params) {
        return tables(env, Queries.events(env, generator, maxRate, params));
    }

    /**
     * A table environment over {@code env} with {@code person}, {@code auction}, {@code bid} made
     * from {@code events}, whose record timestamps and watermarks are already assigned.
     */
    public static StreamTableEnvironment tables(
            StreamExecutionEnvironment env, DataStream<Event> events) {
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().setLocalTimeZone(ZoneOffset.UTC);
        tEnv.createTemporarySystemFunction("count_char", CountChar.class);

        TypeInformation<Row> personType =
                Types.ROW_NAMED(
                        new String[] {"id", "name", "emailAddress", "creditCard", "city", "state"},
                        Types.LONG,
                        Types.STRING,
                        Types.STRING,
                        Types.STRING,
                        Types.STRING,
                        Types.STRING);
        DataStream<Row> persons =
                events.filter(e -> e instanceof Person)
                        .uid("sql-person-filter")
                        .name("sql-person-filter")
                        .map(
                                e -> {
                                    Person p = (Person) e;
                                    return Row.of(
                                            p.id(),
                                            p.name(),
                                            p.emailAddress(),
                                            p.creditCard(),
                                            p.city(),
                                            p.state());
                                },
                                personType)
                        .uid("sql-person-row")
                        .name("sql-person-row");
        // the suite's person also has `extra`; the generator's padding is carried in it
        TypeInformation<Row> auctionType =
                Types.ROW_NAMED(
                        new String[] {
                            "id",
                            "itemName",
                            "description",
                            "initialBid",
                            "reserve",
                            "expires",
                            "seller",
                            "category",
                            "extra"
                        },
                        Types.LONG,
                        Types.STRING,
                        Types.STRING,
                        Types.LONG,
                        Types.LONG,
                        Types.INSTANT,
                        Types.LONG,
                        Types.LONG,
                        Types.STRING);
        DataStream<Row> auctions =
                events.filter(e -> e instanceof Auction)
                        .uid("sql-auction-filter")
                        .name("sql-auction-filter")
                        .map(
                                e -> {
                                    Auction a = (Auction) e;
                                    return Row.of(
                                            a.id(),
                                            a.itemName(),
                                            a.description(),
                                            a.initialBid(),
                                            a.reserve(),
                                            Instant.ofEpochMilli(a.expires()),
                                            a.seller(),
                                            a.category(),
                                            a.extra());
                                },
                                auctionType)
                        .uid("sql-auction-row")
                        .name("sql-auction-row");
        TypeInformation<Row> bidType =
                Types.ROW_NAMED(
                        new String[] {"auction", "bidder", "price", "channel", "url", "extra"},
                        Types.LONG,
                        Types.LONG,
                        Types.LONG,
                        Types.STRING,
                        Types.STRING,
                        Types.STRING);
        DataStream<Row> bids =
                events.filter(e -> e instanceof Bid)
                        .uid("sql-bid-filter")
                        .name("sql-bid-filter")
                        .map(
                                e -> {
                                    Bid b = (Bid) e;
                                    return Row.of(
                                            b.auction(),
                                            b.bidder(),
                                            b.price(),
                                            b.channel(),
                                            b.url(),
                                            b.extra());
                                },
                                bidType)
                        .uid("sql-bid-row")
                        .name("sql-bid-row");

        tEnv.createTemporaryView("person", tEnv.fromDataStream(persons, withRowtime()));
        tEnv.createTemporaryView("auction", tEnv.fromDataStream(auctions, withRowtime()));
        tEnv.createTemporaryView("bid", tEnv.fromDataStream(bids, withRowtime()));
        return tEnv;
    }

    /** The stream's fields, plus {@code dateTime}: the record timestamp as rowtime. */
    private static Schema withRowtime() {
        return Schema.newBuilder()
                .columnByMetadata("dateTime", "TIMESTAMP_LTZ(3)", "rowtime", false)
                .watermark("dateTime", "SOURCE_WATERMARK()")
                .build();
    }

    /**
     * The whole job: source, tables, {@code query}, and the {@link RowChecksum} of its changelog
     * into a discarding sink.
     */
    public static void buildJob(
            StreamExecutionEnvironment env,
            SqlQuery query,
            GeneratorConfig generator,
            double maxRate,
            QueryParams params) {
        StreamTableEnvironment tEnv = tables(env, generator, maxRate, params);
        Table result = tEnv.sqlQuery(sql(query));
        tEnv.toChangelogStream(result)
                .flatMap(new RowChecksum(query.upsertKey()), Types.LONG)
                .uid("checksum")
                .name("checksum")
                .sinkTo(new DiscardingSink<>())
                .uid("discard")
                .name("discard");
    }
}
