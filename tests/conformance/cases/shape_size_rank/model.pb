
;
xPlaceholder*
dtype0*
shape:ÿÿÿÿÿÿÿÿÿ
*
shapeShapex*
T0*
out_type0
,
shape64Shapex*
T0*
out_type0	
(
sizeSizex*
T0*
out_type0

rankRankx*
T0"ª