#!/usr/bin/env python3
"""Records MXNet's own outputs for small Gluon recurrent networks, so tests
(tests/runtime/mxnet_rnn_reference_test.cpp) can compare hybgen's RNN with
MXNet's without MXNet installed. Writes beside this file, per network:

  NAME-symbol.json, NAME-0000.params   Gluon's export()
  NAME-x.npy                           the input (uniform in [-1, 1], seeded)
  NAME-y.npy                           MXNet's output on it (zero initial states)

    python3 -m venv /tmp/mx && /tmp/mx/bin/pip install mxnet==1.9.1 "numpy<1.24"
    /tmp/mx/bin/python tests/data/mxnet_rnn/make.py
"""
import os

import mxnet as mx
import numpy as np
from mxnet import gluon, nd

OUT = os.path.dirname(os.path.abspath(__file__))


class Classifier(gluon.HybridBlock):
    """A recurrent layer inside another block: Gluon exports its begin
    states as _zeros nodes of shape (L*D, 0, H). Last step -> Dense(4)."""

    def __init__(self, layer, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.rnn = layer
            self.fc = gluon.nn.Dense(4)

    def hybrid_forward(self, F, x):
        return self.fc(F.slice_axis(self.rnn(x), axis=1, begin=-1, end=None))


NETWORKS = [  # name, block, input shape
    ("lstm_ntc_classifier", lambda: Classifier(gluon.rnn.LSTM(8, layout="NTC")), (3, 6, 5)),
    ("gru_bidirectional", lambda: gluon.rnn.GRU(6, num_layers=2, bidirectional=True, input_size=4), (5, 2, 4)),
    ("rnn_relu_classifier", lambda: Classifier(gluon.rnn.RNN(5, num_layers=2, activation="relu", layout="NTC")),
     (2, 4, 3)),
]

for i, (name, make, shape) in enumerate(NETWORKS):
    mx.random.seed(10 + i)
    net = make()
    net.initialize(mx.init.Uniform(0.5))
    net.hybridize()
    x = nd.array(np.random.RandomState(i).uniform(-1, 1, shape).astype(np.float32))
    y = net(x)
    net.export(os.path.join(OUT, name))
    np.save(os.path.join(OUT, name + "-x.npy"), x.asnumpy())
    np.save(os.path.join(OUT, name + "-y.npy"), y.asnumpy())
    print(name, shape, "->", y.shape)
