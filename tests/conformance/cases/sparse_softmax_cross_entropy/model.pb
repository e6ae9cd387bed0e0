
2
xPlaceholder*
dtype0*
shape
:
3
labelsPlaceholder*
dtype0*
shape:
N
xent#SparseSoftmaxCrossEntropyWithLogitsxlabels*
Tlabels0*
T0"ª