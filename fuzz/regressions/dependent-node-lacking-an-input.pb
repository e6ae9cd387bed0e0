
.
xPlaceholder*
dtype0*
shape:
2
x_dupPlaceholder*
dtype0*
shape:
%
	fuzz_4679OnesLikex_dup*
T0
?

fuzz_23307SoftmaxCrossEntropyWithLogits	fuzz_4679*
T0"ª