#!/bin/sh
# recio's first run (`make demo`): the repo's sample photos become a dataset MXNet, DALI and
# dmlc-core can read, and you look at it. Every output goes under build/demo/.
#   list -> pack (progress) -> verify -> image headers -> read back -> contact sheets (as packed, and
#   through a transform chain as the model sees them) -> iterator batches -> a training loop's images/s
set -eu
RECIO=${RECIO:-build/recio}
PHOTOS=tests/data/photos
OUT=build/demo

step() { printf '\n== %s\n$ %s\n' "$1" "$2"; }

rm -rf "$OUT"
mkdir -p "$OUT/images/photos" "$OUT/images/more"
# Two folders, so --recursive gives two labels: the sample photos, and a few of them again.
cp "$PHOTOS"/*.jpg "$PHOTOS"/*.png "$OUT/images/photos/"
cp "$PHOTOS"/chelsea-500x375.jpg "$PHOTOS"/coffee-500x333.jpg "$PHOTOS"/rocket-640x480.jpg "$OUT/images/more/"

step "1. list: one line per image (index, label, path), labels per folder" \
     "recio list --recursive --seed 1 $OUT/photos $OUT/images"
"$RECIO" list --recursive --seed 1 "$OUT/photos" "$OUT/images"
head -n 4 "$OUT/photos.lst"

step "2. pack: decode, resize the shorter side to 256, JPEG quality 90, 2 workers" \
     "recio pack --resize 256 --quality 90 --num-thread 2 $OUT/photos $OUT/images"
"$RECIO" pack --resize 256 --quality 90 --num-thread 2 "$OUT/photos" "$OUT/images"

step "3. verify: every record of the .rec reads back" "recio verify $OUT/photos.rec"
"$RECIO" verify "$OUT/photos.rec"

step "4. headers: ordinal offset length flag label id id2 image_bytes" "recio dump --header $OUT/photos.rec | head -n 5"
"$RECIO" dump --header "$OUT/photos.rec" | head -n 5

step "5. read back: every record's image and labels, back to files" "recio unpack $OUT/photos.rec $OUT/unpacked"
"$RECIO" unpack "$OUT/photos.rec" "$OUT/unpacked"

step "6. look: a contact sheet of the records, 'id:label' under each" "recio show $OUT/photos.rec $OUT/sheet.png --tile 128"
"$RECIO" show "$OUT/photos.rec" "$OUT/sheet.png" --tile 128

AUG='random_resized_crop(128) random_flip(0.5) color_jitter(0.4,0.4,0.4)'
step "7. what the model sees: the records through a training transform chain (epoch 0, seed 1)" \
     "recio show $OUT/photos.rec $OUT/augmented.png --tile 128 --seed 1 --spec '$AUG'"
"$RECIO" show "$OUT/photos.rec" "$OUT/augmented.png" --tile 128 --seed 1 --spec "$AUG"

TRAIN='random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw'
step "8. iterate: batches of 4 tensors, 2 decode threads, 2 epochs (the same lines with any --workers)" \
     "recio iter $OUT/photos.rec --spec '$TRAIN' --batch 4 --workers 2 --epochs 2 --shuffle-buffer 8"
"$RECIO" iter "$OUT/photos.rec" --spec "$TRAIN" --batch 4 --workers 2 --epochs 2 --shuffle-buffer 8

step "9. a training loop's input pipeline: images/s and the first batch's checksum" \
     "build/examples/train_loop $OUT/photos.rec 2 4"
"$(dirname "$RECIO")/examples/train_loop" "$OUT/photos.rec" 2 4

printf '\nDone. Outputs in %s/:\n' "$OUT"
printf '  %-22s %s\n' photos.lst "the image list (im2rec format)" \
    photos.rec "the records (MXNet image records in RecordIO)" \
    photos.idx "record index: key<TAB>offset" \
    unpacked/ "the packed images read back as files, labels in unpacked/photos.lst" \
    sheet.png "contact sheet: open it to see what was packed" \
    augmented.png "the same records as a training run would see them"
