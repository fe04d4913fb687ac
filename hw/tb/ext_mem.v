`default_nettype none
`include "chip_defs.vh"
// ext_mem: the external memory model of hw/ISA.md's port.
//
// A write (req && we) stores wdata at the edge that ends its request cycle. A read (req && !we)
// samples the array at that edge and returns the word with rvalid exactly LAT cycles after the
// request cycle. Addresses at or above WORDS read as zero and ignore writes.
//
// `mem` is a plain unpacked array so that a testbench can read and write it element by element
// (cocotb: dut.u_mem.mem[i]; Verilog: u_mem.mem[i]). It powers up to zero.
module ext_mem #(
    parameter WORDS = `EXT_WORDS_DEFAULT,    // 32-bit words (the chip's EXT_WORDS)
    parameter LAT   = `EXT_LAT_DEFAULT       // read latency in cycles (the chip's EXT_LAT)
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        req,
    input  wire        we,
    input  wire [15:0] addr,
    input  wire [31:0] wdata,
    output wire        rvalid,
    output wire [31:0] rdata
);

localparam AW = $clog2(WORDS);    // array index width

reg [31:0] mem [0:WORDS-1];

reg [LAT-1:0]    valid_pipe;    // stage s holds a read s+1 cycles old
reg [32*LAT-1:0] data_pipe;

integer i;

initial begin
    `CHECK_RANGE("WORDS", WORDS, `EXT_WORDS_LO, `EXT_WORDS_HI)
    `CHECK_RANGE("LAT", LAT, `EXT_LAT_LO, `EXT_LAT_HI)
    for (i = 0; i < WORDS; i = i + 1) begin
        mem[i] = 32'd0;
    end
end

wire          in_range = ({16'd0, addr} < WORDS);
wire [AW-1:0] index    = addr[AW-1:0];
wire [31:0]   read_now = in_range ? mem[index] : 32'd0;

always @(posedge clk) begin
    if (req && we && in_range) begin
        mem[index] <= wdata;
    end
end

generate
    if (LAT == 1) begin : g_lat1
        always @(posedge clk) begin
            if (rst) begin
                valid_pipe <= 1'b0;
                data_pipe  <= 32'd0;
            end else begin
                valid_pipe <= req && !we;
                data_pipe  <= read_now;
            end
        end
    end else begin : g_latn
        always @(posedge clk) begin
            if (rst) begin
                valid_pipe <= {LAT{1'b0}};
                data_pipe  <= {(32*LAT){1'b0}};
            end else begin
                valid_pipe <= {valid_pipe[LAT-2:0], req && !we};
                data_pipe  <= {data_pipe[32*(LAT-1)-1:0], read_now};
            end
        end
    end
endgenerate

assign rvalid = valid_pipe[LAT-1];
assign rdata  = data_pipe[32*(LAT-1) +: 32];

endmodule

`default_nettype wire
