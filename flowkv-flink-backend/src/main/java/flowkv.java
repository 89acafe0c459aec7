import io.flowkv.flink.FlowKVStateBackendFactory;

/**
 * Makes {@code state.backend.type: flowkv} work.
 *
 * <p>Flink's {@code StateBackendLoader} knows {@code hashmap}, {@code rocksdb} and {@code forst} by
 * name and treats any other value as the name of a {@code StateBackendFactory} class, loaded with
 * {@code Class.forName(value, false, userClassLoader)}; there is no service loader. The short name
 * {@code flowkv} therefore only resolves if a class of exactly that name exists in the unnamed
 * package: this one. It adds nothing to the real factory.
 */
public final class flowkv extends FlowKVStateBackendFactory {}
