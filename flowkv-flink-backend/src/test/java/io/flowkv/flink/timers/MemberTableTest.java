package io.flowkv.flink.timers;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MemberTableTest {

    /** Equal by id; the hash code is chosen by the test, so probe runs collide and wrap. */
    private static final class Item {
        final int id;
        final int hash;

        Item(int id, int hash) {
            this.id = id;
            this.hash = hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Item && ((Item) o).id == id;
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    @Test
    void behavesLikeAHashMapUnderRandomAddsAndRemoves() {
        for (int hashes : new int[] {1, 7, 1000, Integer.MAX_VALUE}) {
            Random random = new Random(hashes);
            MemberTable<Item> table = new MemberTable<>();
            Map<Integer, Item> model = new HashMap<>();
            for (int step = 0; step < 200_000; step++) {
                // Phases that grow the table and phases that empty it, so it resizes both ways.
                boolean growing = (step / 20_000) % 2 == 0;
                // All in one probe run when every item shares a hash code: fewer ids there.
                int id = random.nextInt(hashes == 1 ? 300 : 3_000);
                Item item = new Item(id, hashFor(id, hashes));
                int op = random.nextInt(10);
                if (op < (growing ? 6 : 3)) {
                    Item before = model.putIfAbsent(id, item);
                    assertThat(table.putIfAbsent(item)).as("add %s", id).isSameAs(before);
                } else if (op < 9) {
                    Item before = model.remove(id);
                    assertThat(table.remove(new Item(id, item.hash)))
                            .as("remove %s", id)
                            .isSameAs(before);
                } else {
                    assertThat(table.get(new Item(id, item.hash)))
                            .as("get %s", id)
                            .isSameAs(model.get(id));
                }
                assertThat(table.size()).isEqualTo(model.size());
            }
            assertSameMembers(table, model);
            for (Integer id : new ArrayList<>(model.keySet())) {
                assertThat(table.remove(new Item(id, hashFor(id, hashes)))).isNotNull();
            }
            assertThat(table.isEmpty()).isTrue();
            assertThat(table.asSet()).isEmpty();
        }
    }

    @Test
    void everyMemberStaysReachableAfterRemovalsInsideAWrappingRun() {
        MemberTable<Item> table = new MemberTable<>();
        // Nine items with one hash code fill a run that wraps past the end of the 16 slots.
        List<Item> items = new ArrayList<>();
        for (int id = 0; id < 9; id++) {
            Item item = new Item(id, 0x7FFF_FFFF);
            items.add(item);
            assertThat(table.putIfAbsent(item)).isNull();
        }
        Item other = new Item(100, 3);
        table.putIfAbsent(other);
        for (int removed = 0; removed < items.size(); removed += 2) {
            assertThat(table.remove(items.get(removed))).isSameAs(items.get(removed));
            for (int id = 0; id < items.size(); id++) {
                Item expected = id % 2 == 0 && id <= removed ? null : items.get(id);
                assertThat(table.get(new Item(id, 0x7FFF_FFFF)))
                        .as("item %s", id)
                        .isSameAs(expected);
            }
            assertThat(table.get(other)).isSameAs(other);
        }
    }

    @Test
    void theSetViewIsReadOnlyAndFailsFastWhenTheTableChanges() {
        MemberTable<Item> table = new MemberTable<>();
        Item a = new Item(1, 1);
        table.putIfAbsent(a);
        table.putIfAbsent(new Item(2, 2));
        assertThat(table.asSet()).hasSize(2).contains(a).doesNotContain(new Item(3, 3));

        Iterator<Item> iterator = table.asSet().iterator();
        iterator.next();
        assertThatThrownBy(iterator::remove).isInstanceOf(UnsupportedOperationException.class);
        table.remove(a);
        assertThatThrownBy(iterator::hasNext).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void shrinksWhenItEmpties() {
        MemberTable<Item> table = new MemberTable<>();
        for (int id = 0; id < 10_000; id++) {
            table.putIfAbsent(new Item(id, id));
        }
        assertThat(table.capacity()).isGreaterThanOrEqualTo(16_384);
        for (int id = 0; id < 10_000; id++) {
            assertThat(table.remove(new Item(id, id))).isNotNull();
        }
        assertThat(table.capacity()).isEqualTo(MemberTable.MIN_CAPACITY);
    }

    private static int hashFor(int id, int distinctHashes) {
        return distinctHashes == Integer.MAX_VALUE ? id * 31 : id % distinctHashes;
    }

    private static void assertSameMembers(MemberTable<Item> table, Map<Integer, Item> model) {
        List<Item> seen = new ArrayList<>();
        for (Item item : table.asSet()) {
            seen.add(item);
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(model.values());
    }
}
