"""The TensorFlow-made models but the zoo: TF1 layers (MLP, CNNs, batch norm, dropout, gradients) and
Keras 3 models, each trained briefly and frozen the way its API freezes."""

import numpy as np

from .building import F32, Model, builder, classification_data, classifier_head, conv_layer, dense_layer, \
    train_and_freeze, variable

# -- the models ------------------------------------------------------------------------------

@builder
def build_mlp(tf):
    """TF1 MLP: matmul + bias_add + relu, then matmul + bias_add + softmax."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        x = v1.placeholder(tf.float32, [None, 20], name="x")
        # RefVariables for the first layer, resource variables for the second: both freeze paths
        hidden = tf.nn.relu(dense_layer(tf, x, "dense1", 32, resource=False), name="dense1/relu")
        logits = dense_layer(tf, hidden, "dense2", 10, resource=True, output_name="logits")
        _, labels, train = classifier_head(tf, logits)
        init = v1.global_variables_initializer()
    data, targets = classification_data(1, (20,), 10, 256)
    frozen = train_and_freeze(tf, graph, init, train, {x: data, labels: targets}, 40, ["probs"])
    feeds = {"x": np.random.default_rng(101).normal(size=(8, 20)).astype(F32)}
    return Model(frozen, feeds, ["logits:0", "probs:0"],
                 "TF1 MLP 20-32-10 (tf.matmul, tf.nn.bias_add, relu, softmax), Adam 40 steps, "
                 "RefVariable and resource-variable layers frozen with convert_variables_to_constants")


@builder
def build_cnn(tf):
    """TF1 CNN: Conv2D, BiasAdd, Relu, MaxPool, AvgPool, Reshape, MatMul, Softmax."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(2)
        x = v1.placeholder(tf.float32, [None, 28, 28, 1], name="image")
        h = tf.nn.relu(conv_layer(tf, x, "conv1", 5, 8, False, strides=1, padding="SAME"))
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")           # 14x14
        h = tf.nn.relu(conv_layer(tf, h, "conv2", 3, 16, False, strides=1, padding="SAME"))
        h = tf.nn.avg_pool2d(h, ksize=3, strides=2, padding="SAME", name="pool2")            # 7x7
        flat = tf.reshape(h, [-1, 7 * 7 * 16], name="flatten")
        logits = dense_layer(tf, flat, "dense", 10, resource=False, output_name="logits")
        _, labels, train = classifier_head(tf, logits)
        init = v1.global_variables_initializer()
    data, targets = classification_data(2, (28, 28, 1), 10, 128)
    frozen = train_and_freeze(tf, graph, init, train, {x: data, labels: targets}, 15, ["probs"])
    feeds = {"image": np.random.default_rng(102).normal(size=(4, 28, 28, 1)).astype(F32)}
    return Model(frozen, feeds, ["logits:0", "probs:0"],
                 "TF1 CNN on 28x28x1: conv 5x5x8 SAME + bias + relu, max pool 2/2 VALID, conv 3x3x16 "
                 "SAME + bias + relu, avg pool 3/2 SAME, reshape, dense 10, softmax; Adam 15 steps")


@builder
def build_cnn_batchnorm(tf):
    """TF1 CNN with inference batch norm (FusedBatchNormV3), a dilated and a strided conv."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    norms = []

    def batch_norm(y, name):
        """fused_batch_norm(is_training=False): trained scale/offset, statistics set from data below."""
        channels = int(y.shape[-1])
        with v1.variable_scope(name):
            scale = variable(tf, "gamma", [channels], False, v1.ones_initializer())
            offset = variable(tf, "beta", [channels], False, v1.zeros_initializer())
            mean = v1.get_variable("moving_mean", [channels], initializer=v1.zeros_initializer(),
                                   trainable=False, use_resource=False)
            var = v1.get_variable("moving_variance", [channels], initializer=v1.ones_initializer(),
                                  trainable=False, use_resource=False)
        out, _, _ = v1.nn.fused_batch_norm(y, scale, offset, mean, var, epsilon=1e-3, is_training=False,
                                           name=f"{name}/FusedBatchNorm")
        batch_mean, batch_var = tf.nn.moments(y, axes=[0, 1, 2])
        norms.append((v1.assign(mean, batch_mean), v1.assign(var, batch_var)))
        return out

    with graph.as_default():
        v1.set_random_seed(3)
        x = v1.placeholder(tf.float32, [None, 16, 16, 3], name="image")
        h = conv_layer(tf, x, "conv1", 3, 8, False, bias=False, strides=1, padding="VALID", dilations=2)  # 12
        h = tf.nn.relu(batch_norm(h, "bn1"))
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")              # 6x6
        h = conv_layer(tf, h, "conv2", 3, 16, False, bias=False, strides=2, padding="SAME")       # 3x3
        h = tf.nn.relu(batch_norm(h, "bn2"))
        h = tf.nn.avg_pool2d(h, ksize=3, strides=1, padding="SAME", name="pool2")               # 3x3
        flat = tf.reshape(h, [-1, 3 * 3 * 16], name="flatten")
        logits = dense_layer(tf, flat, "dense", 5, resource=False, output_name="logits")
        _, labels, train = classifier_head(tf, logits)
        init = v1.global_variables_initializer()
    data, targets = classification_data(3, (16, 16, 3), 5, 128)
    feeds = {x: data, labels: targets}

    def set_statistics(sess):
        """The running mean and variance a full training run would have converged to: the data's."""
        for assign_mean, assign_var in norms:   # in order: bn2's input depends on bn1's statistics
            sess.run([assign_mean, assign_var], feeds)

    frozen = train_and_freeze(tf, graph, init, train, feeds, 15, ["probs"], before_freeze=set_statistics)
    test = {"image": np.random.default_rng(103).normal(size=(4, 16, 16, 3)).astype(F32)}
    return Model(frozen, test, ["logits:0", "probs:0"],
                 "TF1 CNN with batch norm on 16x16x3: conv 3x3x8 dilated 2 VALID, fused_batch_norm "
                 "(is_training=False: FusedBatchNormV3), relu, max pool, conv 3x3x16 stride 2 SAME, "
                 "batch norm, relu, avg pool 3/1 SAME, dense 5, softmax; Adam 15 steps, statistics from data")


def freeze_keras(tf, model, input_spec):
    """TF2's path: a tf.function of the model in inference mode, frozen by convert_variables_to_constants_v2."""
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(input_spec)
    return convert_variables_to_constants_v2(fn).graph.as_graph_def()


def keras_fit(tf, keras, model, x, y, epochs):
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=32, epochs=epochs, verbose=0, shuffle=False)


@builder
def build_keras_cnn(tf):
    """Keras 3 Sequential CNN (batch norm, dropout) frozen to a GraphDef."""
    import keras
    from keras import layers
    keras.backend.clear_session()   # fresh layer names, whatever ran before
    keras.utils.set_random_seed(4)
    model = keras.Sequential([
        keras.Input((12, 12, 1)),
        layers.Conv2D(6, 3, activation="relu"),                  # 10x10
        layers.BatchNormalization(),
        layers.MaxPooling2D(2),                                  # 5x5
        layers.Conv2D(8, 3, padding="same", activation="relu"),
        layers.AveragePooling2D(2, padding="same"),              # 3x3
        layers.Flatten(),
        layers.Dense(16, activation="relu"),
        layers.Dropout(0.25),                                    # gone at inference
        layers.Dense(4, activation="softmax"),
    ])
    data, targets = classification_data(4, (12, 12, 1), 4, 128)
    keras_fit(tf, keras, model, data, targets, epochs=3)
    graph_def = freeze_keras(tf, model, tf.TensorSpec([None, 12, 12, 1], tf.float32, name="image"))
    feeds = {"image": np.random.default_rng(104).normal(size=(4, 12, 12, 1)).astype(F32)}
    return Model(graph_def, feeds, ["Identity:0"],
                 "Keras 3 Sequential CNN (Conv2D relu, BatchNormalization, MaxPooling2D, Conv2D SAME, "
                 "AveragePooling2D SAME, Flatten, Dense relu, Dropout, Dense softmax), fit 3 epochs, "
                 "frozen with convert_variables_to_constants_v2")


@builder
def build_keras_sequence(tf):
    """Keras 3 on sequences: Dense on a rank-3 input and gelu, as transformer blocks have them."""
    import keras
    from keras import layers
    keras.backend.clear_session()
    keras.utils.set_random_seed(5)
    model = keras.Sequential([
        keras.Input((6, 8)),
        layers.Dense(16, activation="gelu"),
        layers.LayerNormalization(),
        layers.GlobalAveragePooling1D(),
        layers.Dense(3, activation="softmax"),
    ])
    data, targets = classification_data(5, (6, 8), 3, 128)
    keras_fit(tf, keras, model, data, targets, epochs=3)
    graph_def = freeze_keras(tf, model, tf.TensorSpec([None, 6, 8], tf.float32, name="tokens"))
    feeds = {"tokens": np.random.default_rng(105).normal(size=(4, 6, 8)).astype(F32)}
    return Model(graph_def, feeds, ["Identity:0"],
                 "Keras 3 sequence classifier: Dense(16, gelu) on [batch, 6, 8], LayerNormalization, "
                 "GlobalAveragePooling1D, Dense softmax; fit 3 epochs, frozen with "
                 "convert_variables_to_constants_v2")


@builder
def build_cnn_dropout(tf):
    """A TF1 CNN frozen with its dropout: keep_prob a PlaceholderWithDefault of 1.0, as tutorials did."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(6)
        x = v1.placeholder(tf.float32, [None, 8, 8, 1], name="image")
        keep_prob = v1.placeholder_with_default(1.0, [], name="keep_prob")
        h = tf.nn.relu(conv_layer(tf, x, "conv", 3, 4, False, strides=1, padding="SAME"))
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool")              # 4x4
        flat = tf.reshape(h, [-1, 4 * 4 * 4], name="flatten")
        dropped = tf.nn.dropout(flat, rate=1.0 - keep_prob, name="dropout")
        logits = dense_layer(tf, dropped, "dense", 3, resource=False, output_name="logits")
        _, labels, train = classifier_head(tf, logits)
        init = v1.global_variables_initializer()
    data, targets = classification_data(6, (8, 8, 1), 3, 64)
    frozen = train_and_freeze(tf, graph, init, train, {x: data, labels: targets, keep_prob: 0.5}, 10, ["probs"])
    feeds = {"image": np.random.default_rng(106).normal(size=(4, 8, 8, 1)).astype(F32)}
    return Model(frozen, feeds, ["probs:0"],
                 "TF1 CNN with tf.nn.dropout on a keep_prob PlaceholderWithDefault(1.0): the frozen "
                 "file keeps dropout's RandomUniform/GreaterEqual/SelectV2, deterministic at keep_prob 1")


@builder
def build_gradients(tf):
    """TensorFlow's own backward pass of a small CNN, frozen: the gradient ops as TF emits them.

    tf.gradients of a cross-entropy through dense, reshape, strided slice, pooling, relu,
    bias_add and conv layers, with respect to the image and to every weight; the weights
    are frozen to Consts, so the file computes the gradients of a trained model for a batch.
    """
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(8)
        x = v1.placeholder(tf.float32, [None, 8, 8, 2], name="image")
        labels = v1.placeholder(tf.int32, [None], name="labels")
        conv = conv_layer(tf, x, "conv", 3, 4, False, strides=1, padding="SAME")
        h = tf.nn.relu(conv)
        h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID", name="pool1")             # 4x4
        h = tf.nn.avg_pool2d(h, ksize=2, strides=1, padding="SAME", name="pool2")              # 4x4
        h = h[:, 1:, :, :]                                                                      # 3x4
        flat = tf.reshape(h, [-1, 3 * 4 * 4], name="flatten")
        logits = dense_layer(tf, flat, "dense", 3, resource=False, output_name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                              name="loss")
        weights = [v for v in v1.global_variables()]
        grads = tf.gradients(loss, [x] + weights)
        names = ["image"] + [v.op.name for v in weights]
        outputs = [tf.identity(g, name=f"grad/{n}") for g, n in zip(grads, names)]
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = v1.global_variables_initializer()
    data, targets = classification_data(8, (8, 8, 2), 3, 64)
    frozen = train_and_freeze(tf, graph, init, train, {x: data, labels: targets}, 10,
                              ["loss"] + [t.op.name for t in outputs])
    rng = np.random.default_rng(108)
    feeds = {"image": rng.normal(size=(4, 8, 8, 2)).astype(F32),
             "labels": rng.integers(0, 3, size=4).astype(np.int32)}
    return Model(frozen, feeds, ["loss:0"] + [t.name for t in outputs],
                 "TF1 tf.gradients of a small CNN's mean sparse cross-entropy with respect to the image "
                 "and every weight (conv, bias_add, relu, max pool, avg pool, strided slice, reshape, "
                 "dense), weights frozen after 10 steps of gradient descent")


@builder
def build_grappler_fused(tf):
    """A small CNN as TensorFlow itself runs it: grappler's remapper (on CPU-placed nodes) turns
    Conv2D/DepthwiseConv2dNative/MatMul + BiasAdd (+ Relu/Relu6) into its _Fused* ops, with the
    attrs TF 2.x writes (TArgs, num_host_args, filter_format, _input_shapes)."""
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.grappler import tf_optimizer
    v1 = tf.compat.v1
    rng = np.random.default_rng(9)
    graph = tf.Graph()
    with graph.as_default(), graph.device("/device:CPU:0"):
        x = v1.placeholder(tf.float32, [None, 8, 8, 3], name="image")
        w = tf.constant((rng.normal(size=(3, 3, 3, 8)) * 0.3).astype(F32))
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, 1, "SAME"), tf.constant(rng.normal(size=8).astype(F32))))
        wd = tf.constant((rng.normal(size=(3, 3, 8, 1)) * 0.3).astype(F32))
        y = tf.nn.relu6(tf.nn.bias_add(tf.nn.depthwise_conv2d(y, wd, [1, 2, 2, 1], "SAME"),
                                       tf.constant(rng.normal(size=8).astype(F32))))
        flat = tf.identity(tf.reshape(y, [-1, 4 * 4 * 8]), name="flat")  # kept: grappler runs no Identity removal here
        wm = tf.constant((rng.normal(size=(128, 5)) * 0.1).astype(F32))
        tf.identity(tf.nn.bias_add(tf.matmul(flat, wm), tf.constant(rng.normal(size=5).astype(F32))), name="logits")
        meta_graph = v1.train.export_meta_graph(graph=graph)
    meta_graph.collection_def["train_op"].node_list.value.extend(["logits"])  # what grappler keeps
    config = config_pb2.ConfigProto()
    config.graph_options.rewrite_options.optimizers.extend(["constfold", "remap"])
    config.graph_options.rewrite_options.min_graph_nodes = -1
    graph_def = tf_optimizer.OptimizeGraph(config, meta_graph)
    fused = sorted(n.op for n in graph_def.node if n.op.startswith("_Fused"))
    assert fused == ["_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul"], fused
    feeds = {"image": rng.normal(size=(2, 8, 8, 3)).astype(F32)}
    return Model(graph_def, feeds, ["logits:0"],
                 "TF1 CNN after TensorFlow's own grappler remapper: _FusedConv2D [BiasAdd, Relu], "
                 "_FusedDepthwiseConv2dNative [BiasAdd, Relu6] stride 2, _FusedMatMul [BiasAdd]")
