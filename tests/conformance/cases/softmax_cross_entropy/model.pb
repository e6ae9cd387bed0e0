
2
xPlaceholder*
dtype0*
shape
:
7
labelsPlaceholder*
dtype0*
shape
:
9
xentSoftmaxCrossEntropyWithLogitsxlabels*
T0"ª