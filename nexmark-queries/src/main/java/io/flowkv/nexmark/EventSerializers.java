package io.flowkv.nexmark;

import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Explicit serializers for the event records, so that window state holds the events' own bytes
 * (longs as 8 bytes, strings as a 2-byte length and their ASCII bytes) rather than Kryo's class
 * tags. Flink finds them through the {@code @TypeInfo} annotations on the records.
 *
 * <pre>
 * Person:  id | name | email | creditCard | city | state | dateTime | extra
 * Auction: id | itemName | description | initialBid | reserve | dateTime | expires | seller
 *          | category | extra
 * Bid:     auction | bidder | price | channel | url | dateTime | extra
 * Event:   tag (1 byte: 0 person, 1 auction, 2 bid) | the record
 * </pre>
 */
public final class EventSerializers {

    private EventSerializers() {}

    /**
     * Writes {@code s} exactly as {@link DataOutputView#writeUTF} would (a 2-byte length, then
     * modified UTF-8), but copies an ASCII string's bytes in one go instead of character by
     * character: the generator's strings are ASCII, and writeUTF's per-character loop was the
     * single largest cost of serializing a bid.
     */
    static void writeString(DataOutputView out, String s) throws IOException {
        int n = s.length();
        if (n <= 0xFFFF) {
            // UTF-8 of an ASCII string is its characters, one byte each (the JDK copies a Latin-1
            // string's array for it); more bytes than characters means non-ASCII.
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            if (bytes.length == n && hasNoZero(bytes)) {
                out.writeShort(n);
                out.write(bytes);
                return;
            }
        }
        out.writeUTF(s);
    }

    /** Reads what {@link #writeString} (or {@link DataOutputView#writeUTF}) wrote. */
    static String readString(DataInputView in) throws IOException {
        int n = in.readUnsignedShort();
        byte[] bytes = new byte[n];
        in.readFully(bytes);
        for (byte b : bytes) {
            if (b <= 0) {
                // A zero byte or a multi-byte sequence: decode modified UTF-8 the JDK's way.
                byte[] prefixed = new byte[n + 2];
                prefixed[0] = (byte) (n >>> 8);
                prefixed[1] = (byte) n;
                System.arraycopy(bytes, 0, prefixed, 2, n);
                return new DataInputStream(new ByteArrayInputStream(prefixed)).readUTF();
            }
        }
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    /** Modified UTF-8 writes the character 0 as two bytes. */
    private static boolean hasNoZero(byte[] bytes) {
        for (byte b : bytes) {
            if (b == 0) {
                return false;
            }
        }
        return true;
    }

    /** Serialized size of a string written by {@link DataOutputView#writeUTF} (ASCII only). */
    static int stringSize(String s) {
        return 2 + s.length();
    }

    /** Serialized size of a person, the unit of the generator's size targets. */
    static int size(Person p) {
        return 8 * 2
                + stringSize(p.name())
                + stringSize(p.emailAddress())
                + stringSize(p.creditCard())
                + stringSize(p.city())
                + stringSize(p.state())
                + stringSize(p.extra());
    }

    /** Serialized size of an auction. */
    static int size(Auction a) {
        return 8 * 7
                + stringSize(a.itemName())
                + stringSize(a.description())
                + stringSize(a.extra());
    }

    /** Serialized size of a bid. */
    static int size(Bid b) {
        return 8 * 4 + stringSize(b.channel()) + stringSize(b.url()) + stringSize(b.extra());
    }

    /** Serializer of an immutable record: copies are the record itself. */
    abstract static class RecordSerializer<T> extends TypeSerializerSingleton<T> {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean isImmutableType() {
            return true;
        }

        @Override
        public T copy(T from) {
            return from;
        }

        @Override
        public T copy(T from, T reuse) {
            return from;
        }

        @Override
        public int getLength() {
            return -1;
        }

        @Override
        public T deserialize(T reuse, DataInputView source) throws IOException {
            return deserialize(source);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            serialize(deserialize(source), target);
        }
    }

    /** Serializer of {@link Person}. */
    public static final class PersonSerializer extends RecordSerializer<Person> {
        private static final long serialVersionUID = 1L;
        public static final PersonSerializer INSTANCE = new PersonSerializer();

        @Override
        public Person createInstance() {
            return new Person(0, "", "", "", "", "", 0, "");
        }

        @Override
        public void serialize(Person p, DataOutputView out) throws IOException {
            out.writeLong(p.id());
            writeString(out, p.name());
            writeString(out, p.emailAddress());
            writeString(out, p.creditCard());
            writeString(out, p.city());
            writeString(out, p.state());
            out.writeLong(p.dateTime());
            writeString(out, p.extra());
        }

        @Override
        public Person deserialize(DataInputView in) throws IOException {
            return new Person(
                    in.readLong(),
                    readString(in),
                    readString(in),
                    readString(in),
                    readString(in),
                    readString(in),
                    in.readLong(),
                    readString(in));
        }

        @Override
        public TypeSerializerSnapshot<Person> snapshotConfiguration() {
            return new PersonSerializerSnapshot();
        }
    }

    /** Snapshot of {@link PersonSerializer}. */
    public static final class PersonSerializerSnapshot
            extends SimpleTypeSerializerSnapshot<Person> {
        public PersonSerializerSnapshot() {
            super(() -> PersonSerializer.INSTANCE);
        }
    }

    /** Serializer of {@link Auction}. */
    public static final class AuctionSerializer extends RecordSerializer<Auction> {
        private static final long serialVersionUID = 1L;
        public static final AuctionSerializer INSTANCE = new AuctionSerializer();

        @Override
        public Auction createInstance() {
            return new Auction(0, "", "", 0, 0, 0, 0, 0, 0, "");
        }

        @Override
        public void serialize(Auction a, DataOutputView out) throws IOException {
            out.writeLong(a.id());
            writeString(out, a.itemName());
            writeString(out, a.description());
            out.writeLong(a.initialBid());
            out.writeLong(a.reserve());
            out.writeLong(a.dateTime());
            out.writeLong(a.expires());
            out.writeLong(a.seller());
            out.writeLong(a.category());
            writeString(out, a.extra());
        }

        @Override
        public Auction deserialize(DataInputView in) throws IOException {
            return new Auction(
                    in.readLong(),
                    readString(in),
                    readString(in),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    readString(in));
        }

        @Override
        public TypeSerializerSnapshot<Auction> snapshotConfiguration() {
            return new AuctionSerializerSnapshot();
        }
    }

    /** Snapshot of {@link AuctionSerializer}. */
    public static final class AuctionSerializerSnapshot
            extends SimpleTypeSerializerSnapshot<Auction> {
        public AuctionSerializerSnapshot() {
            super(() -> AuctionSerializer.INSTANCE);
        }
    }

    /** Serializer of {@link Bid}. */
    public static final class BidSerializer extends RecordSerializer<Bid> {
        private static final long serialVersionUID = 1L;
        public static final BidSerializer INSTANCE = new BidSerializer();

        @Override
        public Bid createInstance() {
            return new Bid(0, 0, 0, "", "", 0, "");
        }

        @Override
        public void serialize(Bid b, DataOutputView out) throws IOException {
            out.writeLong(b.auction());
            out.writeLong(b.bidder());
            out.writeLong(b.price());
            writeString(out, b.channel());
            writeString(out, b.url());
            out.writeLong(b.dateTime());
            writeString(out, b.extra());
        }

        @Override
        public Bid deserialize(DataInputView in) throws IOException {
            return new Bid(
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    readString(in),
                    readString(in),
                    in.readLong(),
                    readString(in));
        }

        @Override
        public TypeSerializerSnapshot<Bid> snapshotConfiguration() {
            return new BidSerializerSnapshot();
        }
    }

    /** Snapshot of {@link BidSerializer}. */
    public static final class BidSerializerSnapshot extends SimpleTypeSerializerSnapshot<Bid> {
        public BidSerializerSnapshot() {
            super(() -> BidSerializer.INSTANCE);
        }
    }

    /** Serializer of any {@link Event}: a one-byte tag, then the record. */
    public static final class EventSerializer extends RecordSerializer<Event> {
        private static final long serialVersionUID = 1L;
        public static final EventSerializer INSTANCE = new EventSerializer();

        private static final byte PERSON = 0;
        private static final byte AUCTION = 1;
        private static final byte BID = 2;

        @Override
        public Event createInstance() {
            return BidSerializer.INSTANCE.createInstance();
        }

        @Override
        public void serialize(Event e, DataOutputView out) throws IOException {
            if (e instanceof Bid b) {
                out.writeByte(BID);
                BidSerializer.INSTANCE.serialize(b, out);
            } else if (e instanceof Auction a) {
                out.writeByte(AUCTION);
                AuctionSerializer.INSTANCE.serialize(a, out);
            } else {
                out.writeByte(PERSON);
                PersonSerializer.INSTANCE.serialize((Person) e, out);
            }
        }

        @Override
        public Event deserialize(DataInputView in) throws IOException {
            byte tag = in.readByte();
            switch (tag) {
                case BID:
                    return BidSerializer.INSTANCE.deserialize(in);
                case AUCTION:
                    return AuctionSerializer.INSTANCE.deserialize(in);
                case PERSON:
                    return PersonSerializer.INSTANCE.deserialize(in);
                default:
                    throw new IOException("Unknown NEXMark event tag " + tag);
            }
        }

        @Override
        public TypeSerializerSnapshot<Event> snapshotConfiguration() {
            return new EventSerializerSnapshot();
        }
    }

    /** Snapshot of {@link EventSerializer}. */
    public static final class EventSerializerSnapshot extends SimpleTypeSerializerSnapshot<Event> {
        public EventSerializerSnapshot() {
            super(() -> EventSerializer.INSTANCE);
        }
    }

    /** Type information that hands out one fixed, stateless serializer. */
    static final class RecordTypeInfo<T> extends TypeInformation<T> {
        private static final long serialVersionUID = 1L;

        private final Class<T> type;
        private final TypeSerializer<T> serializer;

        RecordTypeInfo(Class<T> type, TypeSerializer<T> serializer) {
            this.type = type;
            this.serializer = serializer;
        }

        @Override
        public boolean isBasicType() {
            return false;
        }

        @Override
        public boolean isTupleType() {
            return false;
        }

        @Override
        public int getArity() {
            return 1;
        }

        @Override
        public int getTotalFields() {
            return 1;
        }

        @Override
        public Class<T> getTypeClass() {
            return type;
        }

        @Override
        public boolean isKeyType() {
            return false;
        }

        @Override
        public TypeSerializer<T> createSerializer(SerializerConfig config) {
            return serializer;
        }

        @Override
        public String toString() {
            return "NexmarkType<" + type.getSimpleName() + ">";
        }

        @Override
        public boolean equals(Object obj) {
            return obj instanceof RecordTypeInfo<?> other && other.type == type;
        }

        @Override
        public int hashCode() {
            return type.hashCode();
        }

        @Override
        public boolean canEqual(Object obj) {
            return obj instanceof RecordTypeInfo;
        }
    }

    /** Type information of {@link Event}. */
    public static final TypeInformation<Event> EVENT_TYPE =
            new RecordTypeInfo<>(Event.class, EventSerializer.INSTANCE);

    /** Type information of {@link Person}. */
    public static final TypeInformation<Person> PERSON_TYPE =
            new RecordTypeInfo<>(Person.class, PersonSerializer.INSTANCE);

    /** Type information of {@link Auction}. */
    public static final TypeInformation<Auction> AUCTION_TYPE =
            new RecordTypeInfo<>(Auction.class, AuctionSerializer.INSTANCE);

    /** Type information of {@link Bid}. */
    public static final TypeInformation<Bid> BID_TYPE =
            new RecordTypeInfo<>(Bid.class, BidSerializer.INSTANCE);

    /** Found by Flink through {@code @TypeInfo} on {@link Event}. */
    public static final class EventTypeInfoFactory extends TypeInfoFactory<Event> {
        @Override
        public TypeInformation<Event> createTypeInfo(
                Type t, Map<String, TypeInformation<?>> genericParameters) {
            return EVENT_TYPE;
        }
    }

    /** Found by Flink through {@code @TypeInfo} on {@link Person}. */
    public static final class PersonTypeInfoFactory extends TypeInfoFactory<Person> {
        @Override
        public TypeInformation<Person> createTypeInfo(
                Type t, Map<String, TypeInformation<?>> genericParameters) {
            return PERSON_TYPE;
        }
    }

    /** Found by Flink through {@code @TypeInfo} on {@link Auction}. */
    public static final class AuctionTypeInfoFactory extends TypeInfoFactory<Auction> {
        @Override
        public TypeInformation<Auction> createTypeInfo(
                Type t, Map<String, TypeInformation<?>> genericParameters) {
            return AUCTION_TYPE;
        }
    }

    /** Found by Flink through {@code @TypeInfo} on {@link Bid}. */
    public static final class BidTypeInfoFactory extends TypeInfoFactory<Bid> {
        @Override
        public TypeInformation<Bid> createTypeInfo(
                Type t, Map<String, TypeInformation<?>> genericParameters) {
            return BID_TYPE;
        }
    }
}
