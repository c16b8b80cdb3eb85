// OverlayLayers::parse: the overlay mounts of a /proc/PID/mountinfo text
// (a container's image layers), whose files atrace identifies as the
// kernel's uprobes do, by the layer's file.
#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include "uprobes/process_root.h"

using atrace::uprobes::OverlayLayers;

TEST(UprobesOverlayLayers, ParsesLayersUpperFirst) {
  const std::string text =
      "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
      "36 35 0:48 / /opt/app rw,relatime - overlay ov "
      "rw,lowerdir=/var/lib/l1:/var/lib/l2,upperdir=/var/lib/u,workdir=/var/lib/w,uuid=on\n"
      "41 22 0:52 /sub /data\\040dir rw shared:5 master:2 - overlay x "
      "rw,lowerdir+=/a\\040b,lowerdir+=/c,datadir+=/d\n"
      "50 22 0:60 / /tmp rw - tmpfs tmpfs rw\n"
      "truncated line\n";
  const auto mounts = OverlayLayers::parse(text);
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].dev, makedev(0, 48));
  EXPECT_EQ(mounts[0].mount_point, "/opt/app");
  EXPECT_EQ(mounts[0].root, "/");
  EXPECT_EQ(mounts[0].layers,
            (std::vector<std::string>{"/var/lib/u", "/var/lib/l1", "/var/lib/l2"}));
  EXPECT_EQ(mounts[1].dev, makedev(0, 52));
  EXPECT_EQ(mounts[1].mount_point, "/data dir");
  EXPECT_EQ(mounts[1].root, "/sub");
  EXPECT_EQ(mounts[1].layers, (std::vector<std::string>{"/a b", "/c"}));
}

TEST(UprobesOverlayLayers, AFileOfNoOverlayKeepsItsIdentity) {
  const OverlayLayers none(-1);  // no such process: no mounts
  EXPECT_TRUE(none.empty());
  const atrace::uprobes::FileId id{makedev(0, 48), 1234};
  EXPECT_TRUE(none.kernel_id(id, "/opt/app/x") == id);
}
