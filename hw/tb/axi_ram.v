`default_nettype none
`include "chip_defs.vh"
// axi_ram: the external memory of the chip's testbenches, an AXI4 subordinate with a seeded
// profile of latency, backpressure, long stalls and error responses (hw/ISA.md, "The memory
// interface unit"). No Python runs per cycle: everything is drawn here from xorshift64
// generators seeded by a plusarg, so a seed replays the same stall pattern.
//
// Profile, per run, from plusargs read once at time 0 (sim/mem_profile.py writes them; every
// default is the ideal memory):
//   +axi_seed=N                    the generators' seed (default 1)
//   +axi_lat_min=A +axi_lat_max=B  a read burst's latency, drawn in A .. B (default LAT .. LAT):
//                                  its first beat is valid at the earliest in cycle a + latency,
//                                  a the AR handshake's cycle
//   +axi_ar_low=P ..  +axi_r_low  +axi_aw_low  +axi_w_low  +axi_b_low
//                                  the probability, in 1/1024, that a channel's ready (AR, AW,
//                                  W) or valid (R, B) is held low in a cycle (default 0); a
//                                  raised valid stays raised until its ready
//   +axi_stall_prob=P +axi_stall_len=N   with probability P/16384 a cycle starts a stall of N
//                                  cycles in which no channel moves (default 0, 0)
//   +axi_rd_err_lo=A +axi_rd_err_hi=B    word addresses A .. B answer reads with SLVERR and
//   +axi_wr_err_lo=A +axi_wr_err_hi=B    data 0, writes with DECERR (the word is not written;
//                                  the burst's other words are); default: none
// The ideal memory of hw/ISA.md is the default: latency LAT, B in the cycle after the last W
// beat, nothing held low.
//
// Bursts are served in order (one ID); a W beat is accepted once its AW is (in the same cycle
// at the earliest). `mem` is a plain unpacked array of 32-bit words (u_mem.mem[i] from cocotb
// or Verilog), zero at power-up; words at or above WORDS read as zero and ignore writes.
//
// Counted for the bounds check (stall_counts, 6 x 32 bits, from reset): per channel
// the cycles a valid (AR, AW, W) waited for its ready while this memory held it low, or a beat
// (R, B) that could go was held back, and the read latency beyond LAT summed over bursts.
// Every W handshake is also shown on w_event / w_event_addr / w_event_data (the harness's
// write log).
module axi_ram #(
    parameter WORDS = `EXT_WORDS_DEFAULT,    // 32-bit words (the chip's EXT_WORDS)
    parameter LAT   = `EXT_LAT_DEFAULT,      // the ideal latency (the chip's EXT_LAT)
    parameter ARQ   = `AXI_READS_MAX,        // read bursts accepted and not finished, at most
    parameter AWQ   = 16                     // write bursts accepted and not finished, at most
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [0:0]  s_axi_arid,
    input  wire [31:0] s_axi_araddr,
    input  wire [7:0]  s_axi_arlen,
    input  wire [2:0]  s_axi_arsize,
    input  wire [1:0]  s_axi_arburst,
    input  wire        s_axi_arvalid,
    output wire        s_axi_arready,
    output wire [0:0]  s_axi_rid,
    output wire [31:0] s_axi_rdata,
    output wire [1:0]  s_axi_rresp,
    output wire        s_axi_rlast,
    output wire        s_axi_rvalid,
    input  wire        s_axi_rready,
    input  wire [0:0]  s_axi_awid,
    input  wire [31:0] s_axi_awaddr,
    input  wire [7:0]  s_axi_awlen,
    input  wire [2:0]  s_axi_awsize,
    input  wire [1:0]  s_axi_awburst,
    input  wire        s_axi_awvalid,
    output wire        s_axi_awready,
    input  wire [31:0] s_axi_wdata,
    input  wire [3:0]  s_axi_wstrb,
    input  wire        s_axi_wlast,
    input  wire        s_axi_wvalid,
    output wire        s_axi_wready,
    output wire [0:0]  s_axi_bid,
    output wire [1:0]  s_axi_bresp,
    output wire        s_axi_bvalid,
    input  wire        s_axi_bready,

    output wire        w_event,         // a W beat is accepted this cycle ..
    output wire [15:0] w_event_addr,    // .. at this word address
    output wire [31:0] w_event_data,

    output wire [6*32-1:0] stall_counts    // {lat, b, w, aw, r, ar}, each 32 bits, ar at [31:0]
);

localparam AW = $clog2(WORDS);
localparam [1:0] SLVERR = 2'b10;
localparam [1:0] DECERR = 2'b11;

reg [31:0] mem [0:WORDS-1];

// ---------------------------------------------------------------------------------------------
// the profile

integer seed, lat_min, lat_max, low_ar, low_r, low_aw, low_w, low_b, stall_prob, stall_len;
integer rd_err_lo, rd_err_hi, wr_err_lo, wr_err_hi;
integer i;
reg [31:0] backdoor_req, backdoor_ack;   // the bulk backdoor's loads asked for and done
reg [8*512-1:0] backdoor_path;

initial begin
    `CHECK_RANGE("WORDS", WORDS, `EXT_WORDS_LO, `EXT_WORDS_HI)
    `CHECK_RANGE("LAT", LAT, `EXT_LAT_LO, `EXT_LAT_HI)
    for (i = 0; i < WORDS; i = i + 1) begin
        mem[i] = 32'd0;
    end
    backdoor_req = 32'd0;
    backdoor_ack = 32'd0;
    if (!$value$plusargs("axi_backdoor=%s", backdoor_path)) backdoor_path = "axi_backdoor.hex";
    if (!$value$plusargs("axi_seed=%d", seed)) seed = 1;
    if (!$value$plusargs("axi_lat_min=%d", lat_min)) lat_min = LAT;
    if (!$value$plusargs("axi_lat_max=%d", lat_max)) lat_max = LAT;
    if (!$value$plusargs("axi_ar_low=%d", low_ar)) low_ar = 0;
    if (!$value$plusargs("axi_r_low=%d", low_r)) low_r = 0;
    if (!$value$plusargs("axi_aw_low=%d", low_aw)) low_aw = 0;
    if (!$value$plusargs("axi_w_low=%d", low_w)) low_w = 0;
    if (!$value$plusargs("axi_b_low=%d", low_b)) low_b = 0;
    if (!$value$plusargs("axi_stall_prob=%d", stall_prob)) stall_prob = 0;
    if (!$value$plusargs("axi_stall_len=%d", stall_len)) stall_len = 0;
    if (!$value$plusargs("axi_rd_err_lo=%d", rd_err_lo)) rd_err_lo = 1;
    if (!$value$plusargs("axi_rd_err_hi=%d", rd_err_hi)) rd_err_hi = 0;
    if (!$value$plusargs("axi_wr_err_lo=%d", wr_err_lo)) wr_err_lo = 1;
    if (!$value$plusargs("axi_wr_err_hi=%d", wr_err_hi)) wr_err_hi = 0;
    if (lat_min < 1 || lat_max < lat_min) begin
        $display("%m: read latency %0d .. %0d: it must be 1 .. and min <= max", lat_min, lat_max);
        $finish;
    end
end

// two xorshift64 generators, stepped every cycle of a profile that draws anything: g0 draws
// the holds and stalls, g1 latencies. The ideal memory (no hold, no stall, one latency) leaves
// them still: every draw would be thrown away, and Icarus pays for every step.
reg [63:0] g0, g1;
reg [31:0] now;            // cycles since reset
reg [31:0] stall_left;     // cycles of the current long stall still to come

function [63:0] xorshift;
    input [63:0] x;
    reg   [63:0] y;
    begin
        y = x ^ (x << 13);
        y = y ^ (y >> 7);
        xorshift = y ^ (y << 17);
    end
endfunction

wire [31:0] seed_32   = seed;
wire        drawing   = ((low_ar | low_r | low_aw | low_w | low_b | stall_prob) != 0) ||
                        (lat_min != lat_max);    // the profile draws anything
wire        stalled   = (stall_left != 32'd0);
wire        hold_ar   = stalled || ({22'd0, g0[9:0]} < low_ar[31:0]);
wire        hold_r    = stalled || ({22'd0, g0[19:10]} < low_r[31:0]);
wire        hold_aw   = stalled || ({22'd0, g0[29:20]} < low_aw[31:0]);
wire        hold_w    = stalled || ({22'd0, g0[39:30]} < low_w[31:0]);
wire        hold_b    = stalled || ({22'd0, g0[49:40]} < low_b[31:0]);
wire        stall_new = !stalled && ({18'd0, g0[63:50]} < stall_prob[31:0]);
wire [31:0] lat_span  = lat_max[31:0] - lat_min[31:0] + 32'd1;
wire [31:0] lat_draw  = lat_min[31:0] + (g1[31:0] % lat_span);

always @(posedge clk) begin
    if (rst) begin
        g0         <= {seed_32 ^ 32'h9E37_79B9, ~seed_32} | 64'd1;
        g1         <= {~seed_32, seed_32 ^ 32'h7F4A_7C15} | 64'd1;
        now        <= 32'd0;
        stall_left <= 32'd0;
    end else begin
        if (drawing) begin
            g0 <= xorshift(g0);
            g1 <= xorshift(g1);
        end
        now <= now + 32'd1;
        if (stalled) begin
            stall_left <= stall_left - 32'd1;
        end else if (stall_new) begin
            stall_left <= stall_len[31:0];
        end
    end
end

// ---------------------------------------------------------------------------------------------
// reads: a queue of accepted bursts, served in order

reg [15:0] arq_addr [0:ARQ-1];
reg [7:0]  arq_len  [0:ARQ-1];
reg [31:0] arq_due  [0:ARQ-1];
reg [8:0]  arq_head, arq_tail, arq_count;
reg [7:0]  r_beat;
reg        r_hold;     // RVALID is up and waits for RREADY

wire        ar_fire  = s_axi_arvalid && s_axi_arready;
wire        r_ready_beat = (arq_count != 9'd0) && (now >= arq_due[arq_head[7:0]]);
wire [15:0] r_addr   = arq_addr[arq_head[7:0]] + {8'd0, r_beat};
wire        r_last   = (r_beat == arq_len[arq_head[7:0]]);
wire        r_error  = ({16'd0, r_addr} >= rd_err_lo[31:0]) && ({16'd0, r_addr} <= rd_err_hi[31:0]);
wire        r_fire   = s_axi_rvalid && s_axi_rready;

assign s_axi_arready = !hold_ar && (arq_count != ARQ[8:0]);
assign s_axi_rvalid  = r_ready_beat && (r_hold || !hold_r);
assign s_axi_rdata   = (r_error || {16'd0, r_addr} >= WORDS) ? 32'd0 : mem[r_addr[AW-1:0]];
assign s_axi_rresp   = r_error ? SLVERR : 2'b00;
assign s_axi_rlast   = r_last;
assign s_axi_rid     = 1'b0;

// (each of the blocks below changes nothing in a cycle without the handshakes or the waits it
// follows, and skips it: on Icarus every signal a block tests costs, and the port is mostly idle)
always @(posedge clk) begin
    if (rst) begin
        arq_head  <= 9'd0;
        arq_tail  <= 9'd0;
        arq_count <= 9'd0;
        r_beat    <= 8'd0;
        r_hold    <= 1'b0;
    end else begin
        if (s_axi_arvalid || s_axi_rvalid || r_hold) begin
            if (ar_fire) begin
                arq_addr[arq_tail[7:0]] <= s_axi_araddr[17:2];
                arq_len[arq_tail[7:0]]  <= s_axi_arlen;
                arq_due[arq_tail[7:0]]  <= now + lat_draw;
                arq_tail <= arq_tail + 9'd1;
            end
            if (r_fire) begin
                r_beat <= r_last ? 8'd0 : r_beat + 8'd1;
            end
            if (r_fire && r_last) begin
                arq_head <= arq_head + 9'd1;
            end
            arq_count <= arq_count + {8'd0, ar_fire} - {8'd0, r_fire && r_last};
            r_hold    <= s_axi_rvalid && !s_axi_rready;
        end
    end
end

// ---------------------------------------------------------------------------------------------
// writes: a queue of accepted AWs; W beats go to the oldest (or, with none, to the AW accepted
// in the same cycle); a B per burst, valid from the cycle after its last beat

reg [15:0] awq_addr [0:AWQ-1];
reg [7:0]  awq_len  [0:AWQ-1];
reg [4:0]  awq_head, awq_tail, awq_count;
reg [7:0]  w_beat;
reg        w_err;      // the current burst has refused a word
reg [1:0]  bq_resp [0:AWQ-1];
reg [31:0] bq_due  [0:AWQ-1];
reg [4:0]  bq_head, bq_tail, bq_count;
reg        b_hold;

wire        aw_fire  = s_axi_awvalid && s_axi_awready;
wire        wa_queue = (awq_count != 5'd0);
wire        wa_valid = wa_queue || aw_fire;               // the W beat's AW is known
wire [15:0] wa_addr  = wa_queue ? awq_addr[awq_head[3:0]] : s_axi_awaddr[17:2];
wire [7:0]  wa_len   = wa_queue ? awq_len[awq_head[3:0]] : s_axi_awlen;
wire [15:0] w_addr   = wa_addr + {8'd0, w_beat};
wire        w_last   = (w_beat == wa_len);
wire        w_error  = ({16'd0, w_addr} >= wr_err_lo[31:0]) && ({16'd0, w_addr} <= wr_err_hi[31:0]);
wire        w_fire   = s_axi_wvalid && s_axi_wready;
wire        w_end    = w_fire && w_last;
wire        b_ready_beat = (bq_count != 5'd0) && (now >= bq_due[bq_head[3:0]]);
wire        b_fire   = s_axi_bvalid && s_axi_bready;

assign s_axi_awready = !hold_aw && (awq_count != AWQ[4:0]) && (bq_count != AWQ[4:0]);
assign s_axi_wready  = !hold_w && wa_valid;
assign s_axi_bvalid  = b_ready_beat && (b_hold || !hold_b);
assign s_axi_bresp   = bq_resp[bq_head[3:0]];
assign s_axi_bid     = 1'b0;

assign w_event      = w_fire;
assign w_event_addr = w_addr;
assign w_event_data = s_axi_wdata;

// The testbench's bulk backdoor (verif/kit/file_load.py): one word written through
// VPI costs microseconds of Python, and a decode step loads hundreds. The testbench writes
// "@address word" lines (hexadecimal) to the file +axi_backdoor names (default
// axi_backdoor.hex, in the simulator's working directory), then gives backdoor_req a new value;
// at the next rising edge of clk the memory reads the file and backdoor_ack takes
// backdoor_req's value. The testbench loads only while the chip is idle; reset touches
// neither counter.
always @(posedge clk) begin
    if (backdoor_req != backdoor_ack) begin
        $readmemh(backdoor_path, mem);
        backdoor_ack <= backdoor_req;
    end
    if (w_fire && !w_error && ({16'd0, w_addr} < WORDS)) begin
        mem[w_addr[AW-1:0]] <= s_axi_wdata;
    end
end

always @(posedge clk) begin
    if (rst) begin
        awq_head  <= 5'd0;
        awq_tail  <= 5'd0;
        awq_count <= 5'd0;
        w_beat    <= 8'd0;
        w_err     <= 1'b0;
        bq_head   <= 5'd0;
        bq_tail   <= 5'd0;
        bq_count  <= 5'd0;
        b_hold    <= 1'b0;
    end else begin
        if (s_axi_awvalid || s_axi_wvalid || s_axi_bvalid || b_hold) begin
            // an AW whose one-beat burst is written in its own cycle never enters the queue
            if (aw_fire && !(!wa_queue && w_end)) begin
                awq_addr[awq_tail[3:0]] <= s_axi_awaddr[17:2];
                awq_len[awq_tail[3:0]]  <= s_axi_awlen;
                awq_tail <= awq_tail + 5'd1;
            end
            if (w_end && wa_queue) begin
                awq_head <= awq_head + 5'd1;
            end
            awq_count <= awq_count + {4'd0, aw_fire && !(!wa_queue && w_end)}
                                   - {4'd0, w_end && wa_queue};
            if (w_fire) begin
                w_beat <= w_last ? 8'd0 : w_beat + 8'd1;
                w_err  <= w_last ? 1'b0 : (w_err || w_error);
            end
            if (w_end) begin
                bq_resp[bq_tail[3:0]] <= (w_err || w_error) ? DECERR : 2'b00;
                bq_due[bq_tail[3:0]]  <= now + 32'd1;
                bq_tail <= bq_tail + 5'd1;
            end
            if (b_fire) begin
                bq_head <= bq_head + 5'd1;
            end
            bq_count <= bq_count + {4'd0, w_end} - {4'd0, b_fire};
            b_hold   <= s_axi_bvalid && !s_axi_bready;
        end
    end
end

// ---------------------------------------------------------------------------------------------
// the delays this memory inserted (hw/ISA.md, "Bounds")

reg [31:0] n_ar, n_r, n_aw, n_w, n_b, n_lat;

always @(posedge clk) begin
    if (rst) begin
        n_ar  <= 32'd0;
        n_r   <= 32'd0;
        n_aw  <= 32'd0;
        n_w   <= 32'd0;
        n_b   <= 32'd0;
        n_lat <= 32'd0;
    end else begin
        if (s_axi_arvalid || r_ready_beat || s_axi_awvalid || s_axi_wvalid || b_ready_beat) begin
            n_ar <= n_ar + {31'd0, s_axi_arvalid && !s_axi_arready};
            n_r  <= n_r + {31'd0, r_ready_beat && !s_axi_rvalid};
            n_aw <= n_aw + {31'd0, s_axi_awvalid && !s_axi_awready};
            n_w  <= n_w + {31'd0, s_axi_wvalid && wa_valid && !s_axi_wready};
            n_b  <= n_b + {31'd0, b_ready_beat && !s_axi_bvalid};
            if (ar_fire && lat_draw > LAT) begin
                n_lat <= n_lat + lat_draw - LAT;
            end
        end
    end
end

assign stall_counts = {n_lat, n_b, n_w, n_aw, n_r, n_ar};

// IDs are one (0); sizes and burst types are the protocol checker's to check
wire unused_axi_ram = &{1'b0, s_axi_arid, s_axi_araddr[31:18], s_axi_araddr[1:0],
                       s_axi_arsize, s_axi_arburst, s_axi_awid, s_axi_awaddr[31:18],
                       s_axi_awaddr[1:0], s_axi_awsize, s_axi_awburst, s_axi_wstrb,
                       s_axi_wlast, arq_head[8], arq_tail[8], awq_head[4], awq_tail[4],
                       bq_head[4], bq_tail[4]};

endmodule

`default_nettype wire
